"""S-FedMV's sequence feature extractor: a bidirectional GRU per view (PyTorch, lazily).

The extractor reads a view's sequences ``(n, T, c)`` with their lengths and returns the final
hidden state of each direction, concatenated (``2 * hidden`` features); a linear head on
those features gives class logits for training. Sequences are end-padded: the forward GRU's
state is read at each sequence's last real step, and the backward GRU reads each sequence
reversed within its own length, so padding never enters a feature.

Training is RMSProp on cross-entropy over shuffled mini-batches (:func:`train`), as in the
paper; a fresh optimizer each call (FedAvg's clients restart from the global weights). torch
is imported inside the functions only; everything outside this module sees numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from fedsec.nn import LocalTraining, require_torch, seeded_init

WHAT = "protocol 's-fedmv'"


@dataclass(frozen=True)
class ExtractorSpec:
    """The architecture of one view's extractor: input channels, hidden size, classes."""

    inputs: int
    hidden: int
    classes: int

    def to_meta(self) -> dict[str, int]:
        return {"inputs": self.inputs, "hidden": self.hidden, "classes": self.classes}

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> ExtractorSpec:
        return cls(inputs=int(meta["inputs"]), hidden=int(meta["hidden"]),
                   classes=int(meta["classes"]))


@cache
def _extractor_class() -> Any:
    torch = require_torch(WHAT)
    nn = torch.nn

    class GRUExtractor(nn.Module):  # type: ignore[name-defined]
        """Forward and backward GRUs over end-padded sequences, and a linear head."""

        def __init__(self, spec: ExtractorSpec) -> None:
            super().__init__()
            self.forward_gru = nn.GRU(spec.inputs, spec.hidden, batch_first=True)
            self.backward_gru = nn.GRU(spec.inputs, spec.hidden, batch_first=True)
            self.head = nn.Linear(2 * spec.hidden, spec.classes)

        def features(self, x: Any, lengths: Any = None) -> Any:
            n, steps = x.shape[0], x.shape[1]
            if lengths is None:
                lengths = torch.full((n,), steps, dtype=torch.long)
            last = (lengths - 1).view(n, 1, 1)
            out, _ = self.forward_gru(x)
            ahead = out.gather(1, last.expand(n, 1, out.shape[2])).squeeze(1)
            t = torch.arange(steps).view(1, steps)
            index = torch.where(t < lengths.view(n, 1), lengths.view(n, 1) - 1 - t, t)
            reverse = x.gather(1, index.unsqueeze(2).expand_as(x))
            out, _ = self.backward_gru(reverse)
            behind = out.gather(1, last.expand(n, 1, out.shape[2])).squeeze(1)
            return torch.cat([ahead, behind], dim=1)

        def forward(self, x: Any, lengths: Any = None) -> Any:
            return self.head(self.features(x, lengths))

    return GRUExtractor


def build(spec: ExtractorSpec, seed: int) -> Any:
    """A new extractor, its weights drawn deterministically from ``seed``."""
    with seeded_init(seed, WHAT):
        return _extractor_class()(spec)


def train(model: Any, x: np.ndarray, lengths: np.ndarray, y: np.ndarray,
          local: LocalTraining, seed: int) -> float:
    """``local.epochs`` epochs on cross-entropy, batches in a seeded random order.

    Returns the mean training loss of the last epoch. Call inside
    :func:`fedsec.nn.deterministic`.
    """
    torch = require_torch(WHAT)
    X = torch.as_tensor(np.array(x), dtype=torch.float32)
    L = torch.as_tensor(np.array(lengths), dtype=torch.long)
    Y = torch.as_tensor(np.array(y), dtype=torch.long)
    optimizer = (torch.optim.RMSprop(model.parameters(), lr=local.lr)
                 if local.optimizer == "rmsprop" else
                 torch.optim.SGD(model.parameters(), lr=local.lr))
    loss_fn = torch.nn.CrossEntropyLoss()
    order_rng = torch.Generator().manual_seed(seed)
    n = X.shape[0]
    last = float("nan")
    model.train()
    for _ in range(local.epochs):
        order = torch.randperm(n, generator=order_rng)
        total = 0.0
        for start in range(0, n, local.batch_size):
            batch = order[start:start + local.batch_size]
            optimizer.zero_grad()
            loss = loss_fn(model(X[batch], L[batch]), Y[batch])
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
        last = total / n
    return last


def extract(model: Any, x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The ``(n, 2 * hidden)`` features of sequences ``x`` (float64)."""
    torch = require_torch(WHAT)
    model.eval()
    with torch.no_grad():
        out = model.features(torch.as_tensor(np.array(x), dtype=torch.float32),
                             torch.as_tensor(np.array(lengths), dtype=torch.long))
    return out.numpy().astype(np.float64)
