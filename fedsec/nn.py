"""PyTorch, as an optional extra: the lazy import, determinism, and weights on the wire.

torch is imported only when a torch-based component runs (:func:`require_torch`); without it
the component fails with one line naming the extra to install. Models run deterministically
(:func:`deterministic`: one thread, deterministic algorithms, seeded from the run's
SeedSequence), and their weights cross the network as one float64 numpy vector with a
recorded layout (:func:`flatten`, :func:`unflatten`), so transcripts stay torch-free.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.errors import CapabilityError, ValidationError

if TYPE_CHECKING:  # pragma: no cover
    import torch

INSTALL_HINT = ("pip install 'fedsec[nn]' (for the CPU build of PyTorch first run "
                "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu)")

Layout = tuple[tuple[str, tuple[int, ...]], ...]
"""Each parameter's name and shape, in the order of a flattened weight vector."""
OPTIMIZERS = ("sgd", "rmsprop")


@dataclass(frozen=True)
class LocalTraining:
    """A FedAvg client's local training: what the server sets, the client runs, and an
    observer of the broadcast knows.

    ``optimizer`` is ``sgd`` (plain, no momentum or weight decay) or ``rmsprop`` (PyTorch's
    ``RMSprop`` with its defaults: ``alpha`` 0.99, ``eps`` 1e-8, no momentum, not centred).
    A fresh optimizer starts every local run, as FedAvg clients restart from the global
    weights.
    """

    epochs: int
    batch_size: int
    lr: float
    optimizer: str = "sgd"
    alpha: float = 0.99
    eps: float = 1e-8

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise ValidationError(f"Unknown local optimizer {self.optimizer!r}; use one of "
                                  f"{OPTIMIZERS}.")
        if self.epochs < 1 or self.batch_size < 1 or not self.lr > 0:
            raise ValidationError("Local training needs epochs >= 1, batch_size >= 1 and "
                                  "lr > 0.")

    def batches(self, n: int) -> list[slice]:
        """The batches of one epoch in a fixed order: consecutive slices of ``n`` samples."""
        return [slice(s, min(s + self.batch_size, n)) for s in range(0, n, self.batch_size)]

    def to_meta(self) -> dict[str, Any]:
        """As plain JSON (a message's metadata)."""
        return {"epochs": self.epochs, "batch_size": self.batch_size, "lr": self.lr,
                "optimizer": self.optimizer}

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> LocalTraining:
        """What :meth:`to_meta` recorded."""
        return cls(epochs=int(meta["epochs"]), batch_size=int(meta["batch_size"]),
                   lr=float(meta["lr"]), optimizer=str(meta["optimizer"]))


class MissingExtraError(CapabilityError):
    """A component needs an optional dependency that is not installed."""


def require_torch(what: str) -> Any:
    """The ``torch`` module, or :class:`MissingExtraError` naming ``what`` and the extra."""
    try:
        import torch
    except ImportError as error:
        raise MissingExtraError(f"{what} needs PyTorch, which is not installed: "
                                f"{INSTALL_HINT}.") from error
    return torch


def torch_seed(rng: np.random.Generator) -> int:
    """A 63-bit torch seed drawn from ``rng`` (a stream of the run's SeedSequence)."""
    return int(rng.integers(0, 2**63 - 1))


@contextlib.contextmanager
def seeded_init(seed: int, what: str = "this component") -> Iterator[None]:
    """Build torch modules inside: their initial weights are drawn from ``seed``.

    torch's layers initialise from its global generator; it is forked for the duration and
    restored after, so building a model leaves every other draw of the process as it was.
    The one idiom for seeding a model's weights (batch orders and other draws take a
    ``torch.Generator``: :func:`deterministic`).
    """
    torch = require_torch(what)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


@contextlib.contextmanager
def deterministic(seed: int) -> Iterator[Any]:
    """Run torch deterministically: one thread, deterministic algorithms, ``seed``.

    Yields a ``torch.Generator`` seeded with ``seed`` for every random draw inside (weight
    initialisation, batch order, dropout). The global settings are restored on exit, so a
    run leaves the process as it found it.
    """
    torch = require_torch("this component")
    threads = torch.get_num_threads()
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    set_deterministic_algorithms(torch, True)
    try:
        yield torch.Generator().manual_seed(seed)
    finally:
        set_deterministic_algorithms(torch, was_deterministic)
        torch.set_num_threads(threads)


def set_deterministic_algorithms(torch: Any, mode: bool) -> None:
    """``torch.use_deterministic_algorithms(mode)``, without importing ``torch._inductor``.

    The public call also sets the compiler's ``deterministic`` option, importing the compiler
    to do so (about a second, once per process). Nothing here compiles: while the compiler is
    not loaded, only the eager flag is set (``torch._C._set_deterministic_algorithms``, which
    ``torch.are_deterministic_algorithms_enabled`` reads); once it is loaded, or if this torch
    lacks the flag's setter, the public call keeps both in step.
    """
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None or "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(mode)
    else:
        setter(mode, warn_only=False)


def layout_of(module: torch.nn.Module) -> Layout:
    """The layout of ``module``'s parameters, in registration order."""
    return tuple((name, tuple(p.shape)) for name, p in module.named_parameters())


def flatten(module: torch.nn.Module) -> np.ndarray:
    """``module``'s parameters as one float64 vector, in :func:`layout_of` order."""
    return np.concatenate([p.detach().cpu().numpy().astype(np.float64).ravel()
                           for p in module.parameters()])


def unflatten(vector: np.ndarray, layout: Sequence[tuple[str, Sequence[int]]]
              ) -> dict[str, np.ndarray]:
    """The named arrays a flattened vector holds under ``layout``.

    Raises
    ------
    fedsec.errors.CapabilityError
        If the vector's length does not match the layout.
    """
    sizes = [int(np.prod(shape)) for _, shape in layout]
    if vector.ndim != 1 or vector.size != sum(sizes):
        raise CapabilityError(f"a weight vector of {vector.size} values does not fit a layout "
                              f"of {sum(sizes)}.")
    out, start = {}, 0
    for (name, shape), size in zip(layout, sizes, strict=True):
        out[name] = vector[start:start + size].reshape(tuple(shape))
        start += size
    return out


def load_flat(module: torch.nn.Module, vector: np.ndarray) -> None:
    """Set ``module``'s parameters from a flattened vector (its own layout)."""
    torch = require_torch("loading weights")
    named = unflatten(np.asarray(vector, dtype=np.float64), layout_of(module))
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(torch.as_tensor(np.array(named[name]), dtype=p.dtype))


def layout_meta(layout: Layout) -> list[list[Any]]:
    """A layout as plain JSON (for a message's metadata)."""
    return [[name, list(shape)] for name, shape in layout]


def layout_from_meta(meta: Sequence[Sequence[Any]]) -> Layout:
    """The layout :func:`layout_meta` recorded."""
    return tuple((str(name), tuple(int(s) for s in shape)) for name, shape in meta)

