"""What a coalition of FDSKL workers learns exactly from one call of Algorithm 3.

Lemma 8's proof (Gu, Dang, Li, Huang) reasons about the sum held at one node.
A worker holding a node also holds the sums of its children, and the
requester learns the offsets' total; :func:`exposure` therefore checks, by
linear algebra over the symbols ``p_l`` (partial dot products) and ``b_l``
(offsets), which non-zero combinations of other workers' ``p`` a coalition can
form from everything it sent, received and drew.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import null_space

from fedsec.protocols.fdskl.trees import Edge, Tree, edges, height, holder, leaves

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.protocols.fdskl.plans import TreePlan


@dataclass(frozen=True)
class Call:
    """One run of Algorithm 3: requester, T1 over all workers, T2 over all but ``excluded``.

    When T2's root is not held by the requester, its holder delivers the
    offsets' sum to the requester (one more message).
    """

    workers: tuple[str, ...]
    requester: str
    t1: Tree
    t2: Tree | None
    excluded: str | None

    def messages(self) -> list[tuple[str, Edge]]:
        """``(tree, edge)`` for every message: T1's, T2's, then the delivery."""
        out = [("T1", e) for e in edges(self.t1)]
        if self.t2 is not None:
            out += [("T2", e) for e in edges(self.t2)]
            root = holder(self.t2)
            if root != self.requester:
                out.append(("T2", Edge(root, self.requester, leaves(self.t2),
                                       height(self.t2) + 1)))
        return out


def _forms(call: Call, coalition: Iterable[str]) -> np.ndarray:
    """Rows over ``[p_1..p_q, b_1..b_q]``: what the coalition sent, received or drew."""
    index = {w: i for i, w in enumerate(call.workers)}
    q = len(call.workers)
    members = set(coalition)
    rows = []
    for tree, edge in call.messages():
        if edge.sender in members or edge.receiver in members:
            row = np.zeros(2 * q)
            for w in edge.covers:
                row[q + index[w]] = 1.0
                if tree == "T1":
                    row[index[w]] = 1.0
            rows.append(row)
    for w in members:
        for offset in (0, q):
            row = np.zeros(2 * q)
            row[offset + index[w]] = 1.0
            rows.append(row)
    return np.array(rows)


@dataclass(frozen=True)
class Exposure:
    """Combinations of other workers' partial dot products a coalition can compute exactly.

    ``combinations`` rows are over ``workers`` (coefficients of ``p_l``);
    ``recovered`` are the workers whose features those equations involve
    (``sum_l c_l w_{G_l}^T x_{G_l}`` is linear in the union of their features,
    so enough random directions identify all of them); ``isolated`` are the
    workers whose own ``p_l`` is one of them.
    """

    workers: tuple[str, ...]
    combinations: np.ndarray
    recovered: tuple[str, ...]
    isolated: tuple[str, ...]


def exposure(call: Call, coalition: Iterable[str], *, tol: float = 1e-9) -> Exposure:
    """What ``coalition`` learns exactly about other workers' ``p`` in one call of Algorithm 3.

    Examples
    --------
    >>> ws = ("a", "x", "y", "z")
    >>> paper = Call(ws, "a", (("a", "x"), ("y", "z")), (("y", "a"), "z"), "x")
    >>> exposure(paper, ["a"]).recovered   # the requester learns p_y + p_z
    ('y', 'z')
    """
    members = set(coalition)
    q = len(call.workers)
    F = _forms(call, members)
    outside = [i for i, w in enumerate(call.workers) if w not in members]
    noise = [q + i for i in range(q)] + [i for i, w in enumerate(call.workers) if w in members]
    combos = null_space(F[:, noise].T, rcond=tol) if F.size else np.zeros((0, 0))
    if combos.size == 0:
        return Exposure(call.workers, np.zeros((0, q)), (), ())
    values = (combos.T @ F)[:, :q]
    values[:, [i for i in range(q) if i not in outside]] = 0.0
    values = values[np.abs(values).max(axis=1) > tol] if values.size else values
    if values.size:
        _, s, vt = np.linalg.svd(values, full_matrices=False)
        values = vt[s > tol * max(1.0, s.max())]
    support = np.abs(values).max(axis=0) > tol if values.size else np.zeros(q, dtype=bool)
    recovered = tuple(w for i, w in enumerate(call.workers) if support[i])
    isolated = []
    for i, w in enumerate(call.workers):
        if support[i]:
            e = np.zeros(q)
            e[i] = 1.0
            coef, *_ = np.linalg.lstsq(values.T, e, rcond=None)
            if np.allclose(values.T @ coef, e, atol=1e-8):
                isolated.append(w)
    return Exposure(call.workers, values, recovered, tuple(isolated))


def single_worker_leaks(call: Call) -> list[str]:
    """Workers that alone learn an exact combination of other workers' partial products."""
    return [w for w in call.workers if exposure(call, [w]).recovered]


@dataclass(frozen=True)
class CoalitionResult:
    """What one coalition recovers exactly, per excluded worker ``l'``."""

    coalition: tuple[str, ...]
    recovered: Mapping[str, tuple[str, ...]]

    def workers(self) -> tuple[str, ...]:
        """Workers whose features the coalition recovers for at least one ``l'``."""
        return tuple(sorted({w for ws in self.recovered.values() for w in ws}))


def enumerate_coalitions(plan: TreePlan, max_size: int, *,
                         offsets: bool = True) -> list[CoalitionResult]:
    """Every coalition of up to ``max_size`` workers and what it recovers, per ``l'``.

    Without offsets (``offsets=False``) every T1 message is a plain sum of
    partial products, so one call decides everything.
    """
    out = []
    excluded: list[str | None] = list(plan.t2) if offsets else [None]
    for size in range(1, max_size + 1):
        for coalition in itertools.combinations(plan.workers, size):
            if len(coalition) == len(plan.workers):
                continue
            found = {}
            for ex in excluded:
                call = plan.call(ex)
                if not offsets:
                    call = Call(plan.workers, plan.requester, plan.t1, None, None)
                    found["none"] = _plain_recovered(call, coalition)
                    continue
                rec = exposure(call, coalition).recovered
                if rec:
                    found[str(ex)] = rec
            out.append(CoalitionResult(coalition, found))
    return out


def _plain_recovered(call: Call, coalition: Sequence[str]) -> tuple[str, ...]:
    """Without offsets every T1 sum a coalition sees is exact: the workers it covers."""
    members = set(coalition)
    found: set[str] = set()
    for _, edge in call.messages():
        if edge.receiver in members or edge.sender in members:
            found |= set(edge.covers) - members
    return tuple(w for w in call.workers if w in found)
