"""Which senders share pairwise masks: the complete graph, or SecAgg+'s sparse Harary graph.

Bell, Bonawitz, Gascón, Lepoint and Raykova, "Secure Single-Server Aggregation
with (Poly)Logarithmic Overhead", CCS 2020 (SecAgg+): instead of every pair of
K senders sharing a mask (K(K-1)/2 keys, K-1 masks per sender), each sender
masks with k neighbours on a graph drawn at random, and k = O(log K) keeps the
sum private against a constant fraction of corrupted senders with high
probability.

fedsec draws the graph as a Harary graph H(k, K) (Harary, "The maximum
connectivity of a graph", PNAS 1962): the senders, in an order drawn from a
seed, on a ring, each joined to the k/2 nearest on either side. What the
aggregator learns from the masked contributions, with a coalition C of senders,
is the sum over each connected component of the honest senders' subgraph
(masks inside a component cancel in its sum; masks to C are known to C):

* H(k, K) is k-connected, so a coalition of the aggregator and fewer than k
  senders learns nothing beyond the honest senders' sum, whatever the order:
  the same as the complete graph.
* A coalition holding all k neighbours of one sender reads that sender's
  input exactly (its masks are all known).
* Against corruptions that do not depend on the order (each sender corrupted
  with probability ``fraction``, or a fixed set of that fraction of the
  senders), the honest senders split only if two runs of k/2 consecutive ring
  positions are corrupted, which happens with probability at most
  ``C(K, 2) * fraction**k`` (:func:`split_probability_bound`).

SecAgg+ also secret-shares keys among each sender's neighbours so that the sum survives
dropouts: the noise backend does with ``threshold`` (:mod:`fedsec.backends.dropout_round`),
and that Shamir threshold then bounds the coalitions too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np


def graph_order(senders: Sequence[str], seed: bytes) -> tuple[str, ...]:
    """The senders, sorted, then permuted by a generator seeded with ``seed`` (public).

    Every party that has the seed computes the same order.

    Examples
    --------
    >>> graph_order(["c", "a", "b"], b"seed") == graph_order(["b", "c", "a"], b"seed")
    True
    """
    ordered = sorted(senders)
    rng = np.random.default_rng(int.from_bytes(seed, "big"))
    return tuple(ordered[i] for i in rng.permutation(len(ordered)))


def harary_neighbours(order: Sequence[str], degree: int) -> dict[str, tuple[str, ...]]:
    """Each sender's neighbours on H(degree, K): the degree/2 nearest on each side of the ring.

    ``degree`` is even and below ``len(order)``; neighbours are listed sorted.

    Examples
    --------
    >>> harary_neighbours("abcde", 2)["a"], harary_neighbours("abcde", 2)["c"]
    (('b', 'e'), ('b', 'd'))
    """
    n, half = len(order), degree // 2
    if degree % 2 or not 0 < degree < n:
        raise ValueError(f"A Harary ring needs an even degree in [2, {n - 1}]; got {degree}.")
    return {name: tuple(sorted({order[(i + d) % n] for d in range(-half, half + 1) if d}))
            for i, name in enumerate(order)}


def complete_neighbours(senders: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each sender's neighbours on the complete graph: every other sender."""
    return {s: tuple(o for o in senders if o != s) for s in senders}


def edges(neighbours: Mapping[str, Sequence[str]]) -> list[tuple[str, str]]:
    """Every pair ``(a, b)``, ``a < b``, that shares a mask, sorted."""
    return sorted({(min(a, b), max(a, b)) for a, near in neighbours.items() for b in near})


def honest_components(neighbours: Mapping[str, Sequence[str]],
                      corrupted: Iterable[str]) -> list[frozenset[str]]:
    """The connected components of the honest senders: the sums a coalition learns.

    Examples
    --------
    >>> near = harary_neighbours("abcdef", 2)
    >>> sorted(sorted(c) for c in honest_components(near, {"b", "d"}))
    [['a', 'e', 'f'], ['c']]
    """
    bad = set(corrupted)
    honest = [s for s in neighbours if s not in bad]
    seen: set[str] = set()
    out = []
    for start in honest:
        if start in seen:
            continue
        component, stack = {start}, [start]
        while stack:
            for other in neighbours[stack.pop()]:
                if other not in bad and other not in component:
                    component.add(other)
                    stack.append(other)
        seen |= component
        out.append(frozenset(component))
    return out


def split_probability_bound(n_senders: int, degree: int, fraction: float) -> float:
    """An upper bound on the chance that corrupting ``fraction`` of H(degree, K) splits the
    honest senders: ``C(K, 2) * fraction**degree`` (at most 1).

    Corruptions must not depend on the graph's order. A split needs two runs of degree/2
    consecutive corrupted ring positions; there are at most C(K, 2) pairs of starting
    positions and each run pair is corrupted with probability at most ``fraction**degree``.

    Examples
    --------
    >>> split_probability_bound(1024, 40, 1 / 3) < 2.0**-40
    True
    """
    return min(1.0, math.comb(n_senders, 2) * fraction**degree)


def min_degree(n_senders: int, fraction: float, sigma: int = 40) -> int:
    """The smallest even degree whose split bound is at most ``2**-sigma`` (K - 1 when none
    below it is: the complete graph).

    Examples
    --------
    >>> min_degree(1024, 1 / 3), min_degree(64, 0.1)
    (38, 16)
    """
    for degree in range(2, n_senders - 1, 2):
        if split_probability_bound(n_senders, degree, fraction) <= 2.0**-sigma:
            return degree
    return n_senders - 1
