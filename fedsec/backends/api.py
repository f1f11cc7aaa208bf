"""The masking-backend interface: protected values, capabilities, key contexts.

A backend protects a whole vector per call (never one element at a time),
combines protected vectors with the operations it declares, and reveals only
what its key holders may open. Keys and seeds are set up through the network,
so the transcript shows who holds what: public material in full, secret
material only as a fingerprint.

Operations: ``add`` (protected + protected), ``add_plain`` (protected + plain
vector), ``mul_plain_scalar``, ``mul_plain_elementwise``, ``sum`` (many
protected vectors into one).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fedsec.builtin_index import COMPONENTS
from fedsec.component import Component
from fedsec.errors import CapabilityError, ValidationError
from fedsec.plugin_registry import Registry
from fedsec.validation import check_choice
from fedsec.wire import Wire

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation

OPERATIONS = ("add", "add_plain", "mul_plain_scalar", "mul_plain_elementwise", "sum")
SUM, DIRECT = "sum", "direct"
MODES = (SUM, DIRECT)
REQUEST_TAG = "reveal.request"
RESULT_TAG = "reveal.result"


@dataclass(frozen=True)
class Capabilities:
    """What a configured backend can do, as data.

    Attributes
    ----------
    operations : frozenset of str
        Operations on protected values (see :data:`OPERATIONS`).
    exact : bool
        Whether revealed results are exact (up to the declared fixed-point
        quantization) or approximate (CKKS).
    depth : int or None
        Multiplicative depth (plaintext multiplications in a row); None when
        unlimited.
    slots : int or None
        Values per ciphertext; None when values are not packed.
    deterministic : bool
        Whether one seed gives the same transcript bytes (keys derived from
        the seed); False when keys or encryption randomness come from the
        operating system.
    """

    operations: frozenset[str]
    exact: bool
    depth: int | None = None
    slots: int | None = None
    deterministic: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"operations": sorted(self.operations), "exact": self.exact, "depth": self.depth,
                "slots": self.slots, "deterministic": self.deterministic}


@dataclass
class Protected:
    """A protected vector held by one party.

    ``data`` is backend-specific (masked words, ciphertext integers, CKKS
    vectors); ``info`` holds the public facts about it (encoding scale,
    number of summands, level, error bound) that travel in the clear.
    """

    backend: str
    key_id: str
    length: int
    data: Any
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class KeyContext:
    """The keys set up for one group of senders and one receiver.

    ``mode`` is ``"sum"`` (the receiver may open only the sum of all senders'
    vectors) or ``"direct"`` (the receiver opens each vector: a designated
    remover of masks, or the holder of the decryption key).

    ``holders`` maps each key id to the parties holding it; ``state`` keeps a
    backend's in-memory key objects per party (never written anywhere: the
    parties' key stores hold the serialized material).
    """

    backend: str
    senders: tuple[str, ...]
    receiver: str
    key_id: str
    mode: str = "sum"
    holders: dict[str, tuple[str, ...]] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    uses: int = 0

    def next_nonce(self, purpose: str) -> str:
        """A fresh nonce for one protected exchange (masks are never reused)."""
        self.uses += 1
        return f"{self.key_id}/{purpose}/{self.uses}"


class MaskingBackend(Component, ABC):
    """How values are protected in transit and combined while protected.

    Subclasses declare ``protection`` (the name recorded on messages) and
    implement :meth:`setup`, :meth:`protect`, :meth:`reveal`, the operations
    they support, and the wire conversion. Operations a backend lacks raise
    :class:`~fedsec.errors.CapabilityError`; protocols ask for them up front
    with :func:`fedsec.interfaces.check_operations`.
    """

    kind = "backend"
    protection: ClassVar[str] = ""
    #: Operations of the default configuration (instances may narrow them).
    operations: ClassVar[frozenset[str]] = frozenset()
    exact: ClassVar[bool] = True

    @classmethod
    def capabilities(cls) -> dict[str, Any]:
        return {"protection": cls.protection, "operations": sorted(cls.operations),
                "exact": cls.exact}

    @property
    def caps(self) -> Capabilities:
        """This configured instance's capabilities."""
        return Capabilities(operations=self.operations, exact=self.exact)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "capabilities": self.caps.to_dict()}

    # -- keys ----------------------------------------------------------------
    def setup(self, federation: Federation, *, senders: Sequence[str], receiver: str,
              mode: str = SUM) -> KeyContext:
        """Set up keys or shared seeds for ``senders`` → ``receiver`` through the network.

        Called once per group and mode in a run; later calls return the same
        context (keys are not regenerated).
        """
        check_choice(mode, owner=f"backend {self.name!r}", name="mode", choices=MODES)
        contexts = self.__dict__.setdefault("_contexts", {})
        key = (id(federation), tuple(senders), receiver, mode)
        if key not in contexts:
            contexts[key] = self.make_context(federation, senders=tuple(senders),
                                              receiver=receiver, mode=mode)
        return contexts[key]

    @abstractmethod
    def make_context(self, federation: Federation, *, senders: tuple[str, ...], receiver: str,
                     mode: str) -> KeyContext:
        """Create the keys for one group (called once by :meth:`setup`)."""

    def prepare(self, context: KeyContext, party: str, n_values: int) -> None:
        """Precompute what ``party`` will need to protect ``n_values`` values (offline work)."""

    def start_sum(self, federation: Federation, context: KeyContext,
                  nonce: str) -> tuple[str, ...]:
        """Work one sum needs before any contribution is sent; the senders whose contributions
        will reach the receiver.

        All of them by default. A backend that simulates dropouts (``noise`` with a
        ``threshold``) deals its key shares here and leaves out the senders that drop.
        """
        return context.senders

    # -- protect and reveal ---------------------------------------------------
    @abstractmethod
    def protect(self, context: KeyContext, sender: str, values: np.ndarray, *,
                nonce: str) -> Protected:
        """``sender`` protects ``values`` (one call per vector)."""

    @abstractmethod
    def reveal(self, federation: Federation, context: KeyContext,
               protected: Protected) -> np.ndarray:
        """Open ``protected`` for ``context.receiver``, through the key holders if needed."""

    # -- wire -----------------------------------------------------------------
    @abstractmethod
    def to_wire(self, protected: Protected) -> Wire:
        """The payload, protection, key id and public description to send."""

    @abstractmethod
    def from_wire(self, context: KeyContext, party: str, wire: Wire) -> Protected:
        """Rebuild a protected value at ``party`` from what arrived."""

    # -- operations (override those in ``operations``) ------------------------
    def add(self, a: Protected, b: Protected) -> Protected:
        """Protected + protected."""
        raise self._lacks("add")

    def add_plain(self, a: Protected, values: np.ndarray) -> Protected:
        """Protected + plain vector."""
        raise self._lacks("add_plain")

    def mul_plain(self, a: Protected, factor: float | np.ndarray) -> Protected:
        """Protected × plain scalar or element-wise vector."""
        raise self._lacks("mul_plain_scalar" if np.ndim(factor) == 0 else "mul_plain_elementwise")

    def sum(self, items: Sequence[Protected]) -> Protected:
        """Sum of protected vectors (pairwise additions unless a backend does better)."""
        if "sum" not in self.operations:
            raise self._lacks("sum")
        if not items:
            raise CapabilityError("Cannot sum zero protected vectors.")
        return reduce(self.add, items)

    def describe_payload(self, protected: Protected) -> dict[str, Any]:
        """Elements, ciphertexts, bytes, and the values that stay in the clear."""
        return {"backend": self.name, "elements": protected.length, **protected.info}

    @classmethod
    def open_payload(cls, payload: Any, meta: Mapping[str, Any],
                     keys: Mapping[str, bytes]) -> np.ndarray | bytes:
        """Open a recorded payload with held key material (for coalitions' views): its values,
        or the bytes inside (key material sealed to a holder)."""
        raise CapabilityError(f"The {cls.name!r} backend cannot open recorded payloads offline.")

    def _lacks(self, operation: str) -> CapabilityError:
        having = sorted(n for n, c in backends.classes().items() if operation in c.operations)
        return CapabilityError(
            f"The {self.name!r} backend does not support {operation!r}; backends that do: "
            f"{', '.join(having) or 'none'}."
        )


backends: Registry[MaskingBackend] = Registry(
    "backend", MaskingBackend, group="fedsec.backends",
    builtins={name: path for name, (path, _) in COMPONENTS.get("backend", {}).items()})
"""Every masking backend by name (built-ins listed in :mod:`fedsec.builtin_index`)."""


def same_key_summands(items: Sequence[Protected], what: str) -> Protected:
    """The first of ``items`` once all are known to share its length and key (encrypted sums)."""
    if not items:
        raise ValidationError(f"Cannot sum zero {what} vectors.")
    first = items[0]
    for other in items[1:]:
        if other.length != first.length or other.key_id != first.key_id:
            raise ValidationError(f"{what} vectors to add must share a length and a key.")
    return first


def keyholder_reveal(
    federation: Federation, backend: MaskingBackend, context: KeyContext, protected: Protected,
    decrypt: Callable[[Protected], np.ndarray], *, result_meta: Mapping[str, Any] | None = None,
) -> np.ndarray:
    """Open ``protected`` for the receiver through the party holding the secret key.

    A receiver that holds the key decrypts itself. Otherwise it sends the
    protected value to the key holder (``reveal.request``), which decrypts
    it and sends back only the values (``reveal.result``): the key holder
    sees the aggregate, never an individual contribution.
    """
    receiver, keyholder = context.receiver, context.state["keyholder"]
    if receiver == keyholder:
        return decrypt(protected)
    net = federation.network
    arrived = net.send(receiver, keyholder, REQUEST_TAG, backend.to_wire(protected))
    with net.compute(keyholder):
        values = decrypt(backend.from_wire(context, keyholder, arrived))
    result = net.send(keyholder, receiver, RESULT_TAG, values, meta=result_meta)
    return np.asarray(result, dtype=np.float64)
