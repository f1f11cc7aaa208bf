"""Summation trees for FDSKL: tree, cycle and star layouts, Definition 2, what each party learns.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data", section 2.3 and Algorithm 3: the masked partial
dot products ``(w)_{G_l}^T x_{G_l} + b^l`` are summed along a tree T1 over all
workers; the offsets of every worker but a randomly chosen ``l'`` are summed
along a tree T2 over the others, and subtracted. Definition 2: T1 and T2 are
*totally different* when no subtree with more than one leaf belongs to both.

A tree here is a leaf (a worker's name) or a tuple of subtrees. The worker
holding a node is the holder of its first child (Figure 2a: "worker 1 adds the
result from worker 2"); every other child's holder sends its subtree's sum to
it, so a tree over ``n`` leaves costs ``n - 1`` messages, and a message can
start as soon as its subtree is complete (its *round* is the subtree's height
plus one). Layouts: ``tree`` (balanced, logarithmic depth), ``cycle`` (the
sum passes along a ring) and ``star`` (everyone sends to one node).

Lemma 8's proof reasons about the sum held at one node. A worker holding a
node also holds the sums of its children, and the requester learns the
offsets' total; :func:`exposure` therefore checks, by linear algebra over the
symbols ``p_l`` (partial dot products) and ``b_l`` (offsets), which non-zero
combinations of other workers' ``p`` a coalition can form from everything it
sent, received and drew. :func:`build_plan` only returns trees that satisfy
Definition 2 *and* leave every single worker without such a combination, and
refuses (with the reason) when none exist.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import null_space

from fedsec.errors import ValidationError

Tree = str | tuple["Tree", ...]
KINDS = ("tree", "cycle", "star")
MAX_CANDIDATES = 4000
"""T2 orders tried per excluded worker before the search gives up (an explicit limit)."""


def leaves(tree: Tree) -> tuple[str, ...]:
    """The workers under ``tree``, left to right.

    Examples
    --------
    >>> leaves((("a", "b"), "c"))
    ('a', 'b', 'c')
    """
    if isinstance(tree, str):
        return (tree,)
    return tuple(leaf for child in tree for leaf in leaves(child))


def holder(tree: Tree) -> str:
    """The worker holding the root of ``tree`` (its leftmost leaf)."""
    return tree if isinstance(tree, str) else holder(tree[0])


def height(tree: Tree) -> int:
    """Rounds until ``tree``'s sum is complete at its holder (0 for a leaf)."""
    if isinstance(tree, str):
        return 0
    return max([height(tree[0])] + [height(c) + 1 for c in tree[1:]])


def subtree_sets(tree: Tree) -> list[frozenset[str]]:
    """Leaf sets of every internal node with more than one leaf (Definition 2's subtrees)."""
    if isinstance(tree, str):
        return []
    out = [frozenset(leaves(tree))] if len(leaves(tree)) > 1 else []
    for child in tree:
        out.extend(subtree_sets(child))
    return out


@dataclass(frozen=True)
class Edge:
    """One message of a tree sum: ``sender`` sends the sum over ``covers`` to ``receiver``."""

    sender: str
    receiver: str
    covers: tuple[str, ...]
    round: int


def edges(tree: Tree) -> list[Edge]:
    """The messages of a sum along ``tree``, in the order they can be sent (by round).

    Examples
    --------
    >>> [(e.sender, e.receiver, e.round) for e in edges((("a", "b"), ("c", "d")))]
    [('b', 'a', 1), ('d', 'c', 1), ('c', 'a', 2)]
    """
    out: list[Edge] = []

    def walk(node: Tree) -> None:
        if isinstance(node, str):
            return
        for child in node:
            walk(child)
        for child in node[1:]:
            out.append(Edge(holder(child), holder(node), leaves(child), height(child) + 1))

    walk(tree)
    return sorted(out, key=lambda e: e.round)  # stable: traversal order within a round


def balanced(order: Sequence[str]) -> Tree:
    """A balanced binary tree over ``order`` (first half left): logarithmic depth."""
    if len(order) == 1:
        return order[0]
    half = (len(order) + 1) // 2
    return (balanced(order[:half]), balanced(order[half:]))


def chain(order: Sequence[str]) -> Tree:
    """A ring: the last worker starts, each adds its own and passes on, the first ends."""
    return order[0] if len(order) == 1 else (order[0], chain(order[1:]))


def star(order: Sequence[str]) -> Tree:
    """Every worker sends its value to ``order[0]``."""
    return order[0] if len(order) == 1 else tuple(order)


def layout(kind: str, order: Sequence[str]) -> Tree:
    """The tree of ``kind`` over ``order`` (its first worker holds the root)."""
    if kind == "tree":
        return balanced(order)
    if kind == "cycle":
        return chain(order)
    if kind == "star":
        return star(order)
    raise ValidationError(f"Unknown communication structure {kind!r}; expected one of {KINDS}.")


def shared_subtrees(t1: Tree, t2: Tree) -> list[frozenset[str]]:
    """Subtrees with more than one leaf that belong to both trees."""
    second = set(subtree_sets(t2))
    return sorted({s for s in subtree_sets(t1) if s in second}, key=sorted)


def totally_different(t1: Tree, t2: Tree) -> bool:
    """Definition 2: no subtree with more than one leaf belongs to both trees.

    Examples
    --------
    >>> totally_different((("a", "b"), ("c", "d")), (("a", "c"), "b"))
    True
    >>> totally_different((("a", "b"), ("c", "d")), (("a", "b"), "c"))
    False
    """
    return not shared_subtrees(t1, t2)


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


@dataclass(frozen=True)
class TreePlan:
    """The trees one requester uses: T1 over all workers, one T2 per excluded worker.

    ``refused`` lists earlier T1 layouts the builder rejected, with the reason.
    """

    kind: str
    workers: tuple[str, ...]
    requester: str
    t1: Tree
    t2: Mapping[str, Tree]
    refused: tuple[str, ...] = field(default=())

    def call(self, excluded: str | None) -> Call:
        """The Algorithm-3 call leaving ``excluded``'s offset in (None: no offsets, T1 only)."""
        return Call(self.workers, self.requester, self.t1,
                    None if excluded is None else self.t2[excluded], excluded)

    def to_dict(self) -> dict[str, object]:
        """JSON-able form (trees as nested lists), as recorded in the transcript."""
        return {"kind": self.kind, "workers": list(self.workers), "requester": self.requester,
                "t1": as_lists(self.t1), "t2": {k: as_lists(v) for k, v in self.t2.items()}}


def as_lists(tree: Tree) -> object:
    """A tree as nested lists (JSON)."""
    return tree if isinstance(tree, str) else [as_lists(c) for c in tree]


def from_lists(value: object) -> Tree:
    """Inverse of :func:`as_lists`."""
    return value if isinstance(value, str) else tuple(from_lists(c) for c in value)


def plan_from_dict(data: Mapping[str, object]) -> TreePlan:
    """A plan as read back from a transcript's ``tree_plan`` message."""
    return TreePlan(kind=str(data["kind"]), workers=tuple(data["workers"]),
                    requester=str(data["requester"]), t1=from_lists(data["t1"]),
                    t2={k: from_lists(v) for k, v in dict(data["t2"]).items()})


def single_worker_leaks(call: Call) -> list[str]:
    """Workers that alone learn an exact combination of other workers' partial products."""
    return [w for w in call.workers if exposure(call, [w]).recovered]


def _t1_candidates(kind: str, requester: str, others: Sequence[str]) -> list[tuple[str, Tree]]:
    order = [requester, *others]
    if kind == "tree":
        out = [("balanced over all workers (Figure 2a)", balanced(order))]
        if len(others) >= 2:
            out.append(("requester on top of a balanced tree of the others",
                        (requester, balanced(list(others)))))
        return out
    return [(kind, layout(kind, order))]


def _find_t2(kind: str, call_workers: tuple[str, ...], requester: str, t1: Tree,
             excluded: str) -> tuple[Tree | None, str]:
    """The first T2 (in a fixed order) that passes, or None and why none did."""
    members = [w for w in call_workers if w != excluded]
    hub = [w for w in members if w != requester]
    only_total = star([*hub, requester])  # the requester sees nothing of T2 but the total
    bound = exposure(Call(call_workers, requester, t1, only_total, excluded), [requester])
    if bound.recovered:  # the requester must learn the offsets' total, whatever T2 is
        return None, (f"the requester, from T1 and the offsets' total it needs, already "
                      f"computes a combination of the partial products of "
                      f"{', '.join(bound.recovered)} (any T2)")
    example = ""
    for n, order in enumerate(itertools.permutations(members)):
        if n >= MAX_CANDIDATES:
            return None, f"the first {MAX_CANDIDATES} T2 orders fail (search limit){example}"
        t2 = layout(kind, order)
        if not totally_different(t1, t2):
            continue
        leaks = single_worker_leaks(Call(call_workers, requester, t1, t2, excluded))
        if not leaks:
            return t2, ""
        if not example:
            who = leaks[0]
            rec = exposure(Call(call_workers, requester, t1, t2, excluded), [who]).recovered
            example = (f"; e.g. with T2={as_lists(t2)} worker {who} computes a combination "
                       f"of the partial products of {', '.join(rec)}")
    return None, f"every T2 order fails{example or ' (none is totally different from T1)'}"


def build_plan(workers: Sequence[str], requester: str, kind: str = "tree") -> TreePlan:
    """T1 and every T2 for ``requester``: totally different, no single worker learns a ``p``.

    Tries T1 layouts in order (for ``tree``: the paper's balanced layout, then
    the requester on top of a balanced tree of the others) and, for each
    excluded worker, T2 orders in a fixed order. Refuses with the reason when
    no layout passes: an exhaustive search proves it for that ``kind`` and
    ``q``; beyond :data:`MAX_CANDIDATES` orders the refusal says the search
    stopped.

    Examples
    --------
    >>> plan = build_plan(["a", "x", "y", "z"], "a")
    >>> plan.t1
    ('a', (('x', 'y'), 'z'))
    """
    workers = tuple(workers)
    if kind not in KINDS:
        raise ValidationError(f"Unknown communication structure {kind!r}; expected one of {KINDS}.")
    if requester not in workers:
        raise ValidationError(f"The requester {requester!r} is not one of the workers {workers}.")
    if len(workers) < 3:
        raise ValidationError(
            f"Algorithm 3 needs at least 3 workers; got {len(workers)}. With 2, T2 is the "
            "requester alone, so there is no second tree and the other worker's masked partial "
            "product reaches the requester directly. Use more workers or offsets=none."
        )
    others = [w for w in workers if w != requester]
    refused: list[str] = []
    for name, t1 in _t1_candidates(kind, requester, others):
        t2s: dict[str, Tree] = {}
        reason = ""
        for excluded in others:
            t2, why = _find_t2(kind, workers, requester, t1, excluded)
            if t2 is None:
                reason = f"T1 {name} {as_lists(t1)}: with l'={excluded}, {why}"
                break
            t2s[excluded] = t2
        if not reason:
            return TreePlan(kind, workers, requester, t1, t2s, tuple(refused))
        refused.append(reason)
    raise ValidationError(
        f"No {kind} layout for {len(workers)} workers keeps T1 and T2 totally different and "
        f"every single worker blind to other workers' partial products: {'; '.join(refused)}."
    )


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


def rounds(tree: Tree) -> int:
    """Synchronous rounds a sum along ``tree`` takes (its depth)."""
    return height(tree)


def modeled_seconds(tree: Tree, message_bytes: float, *, bandwidth: float = 1e9,
                    latency: float = 1e-4) -> float:
    """Time of one sum under a simple link model (Figure 4's comparison).

    Messages of one round travel in parallel; a receiver takes its round's
    messages one after another on its link (``latency + bytes / bandwidth``
    each). Tree: ``ceil(log2 q)`` rounds of one message; cycle: ``q - 1`` rounds;
    star: one round of ``q - 1`` messages into one receiver.
    """
    by_round: dict[int, dict[str, int]] = {}
    for e in edges(tree):
        by_round.setdefault(e.round, {}).setdefault(e.receiver, 0)
        by_round[e.round][e.receiver] += 1
    per = latency + message_bytes / bandwidth
    return float(sum(max(counts.values()) * per for counts in by_round.values()))
