"""Summation trees for FDSKL: tree, cycle and star layouts, Definition 2, their cost.

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
sum passes along a ring) and ``star`` (everyone sends to one node). What a
coalition learns from a pair of trees is :mod:`fedsec.protocols.fdskl.exposure`;
choosing the pair is :mod:`fedsec.protocols.fdskl.plans`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from fedsec.errors import ValidationError

Tree = str | tuple["Tree", ...]
KINDS = ("tree", "cycle", "star")


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


def as_lists(tree: Tree) -> object:
    """A tree as nested lists (JSON)."""
    return tree if isinstance(tree, str) else [as_lists(c) for c in tree]


def from_lists(value: object) -> Tree:
    """Inverse of :func:`as_lists`."""
    if isinstance(value, str):
        return value
    return tuple(from_lists(c) for c in cast("list[object]", value))


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
