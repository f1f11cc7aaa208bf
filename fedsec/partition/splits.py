"""Pure index arithmetic behind every partition: row blocks, column groups, overlaps.

Each function takes index arrays (and a :class:`numpy.random.Generator` when it
draws) and returns index arrays; none knows about parties.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

_INDEX = np.intp


def class_order(rows: np.ndarray, rng: np.random.Generator, y: np.ndarray | None) -> np.ndarray:
    """Shuffle ``rows``; with class codes ``y`` (indexed by row), group them class by class.

    Dealing the result round-robin gives blocks whose class proportions differ by
    at most one row per class.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> order = class_order(np.arange(6), rng, np.array([1, 0, 1, 0, 1, 0]))
    >>> sorted(order[:3].tolist()), sorted(order[3:].tolist())
    ([1, 3, 5], [0, 2, 4])
    """
    rows = np.asarray(rows, dtype=_INDEX)
    if y is None:
        return rng.permutation(rows)
    labels = y[rows]
    return np.concatenate(
        [rng.permutation(rows[labels == value]) for value in np.unique(labels)]
    ).astype(_INDEX)


def deal(order: np.ndarray, n_blocks: int) -> tuple[np.ndarray, ...]:
    """Deal ``order`` round-robin into ``n_blocks`` blocks, each sorted.

    Examples
    --------
    >>> [b.tolist() for b in deal(np.array([5, 4, 3, 2, 1]), 2)]
    [[1, 3, 5], [2, 4]]
    """
    return tuple(np.sort(order[i::n_blocks]).astype(_INDEX) for i in range(n_blocks))


def even_blocks(
    rows: np.ndarray, n_blocks: int, rng: np.random.Generator, y: np.ndarray | None = None
) -> tuple[np.ndarray, ...]:
    """Split ``rows`` at random into ``n_blocks`` blocks whose sizes differ by at most one.

    With class codes ``y`` the split is stratified.

    Examples
    --------
    >>> blocks = even_blocks(np.arange(10), 3, np.random.default_rng(0))
    >>> [len(b) for b in blocks]
    [4, 3, 3]
    """
    return deal(class_order(rows, rng, y), n_blocks)


def largest_remainder(total: int, counts: np.ndarray) -> np.ndarray:
    """Share ``total`` among classes in proportion to ``counts`` (Hamilton's method).

    No share exceeds its count when ``total <= counts.sum()``.

    Examples
    --------
    >>> largest_remainder(5, np.array([6, 3, 1])).tolist()
    [3, 2, 0]
    """
    exact = total * counts / counts.sum()
    shares = np.floor(exact).astype(np.int64)
    missing = total - int(shares.sum())
    shares[np.argsort(-(exact - shares), kind="stable")[:missing]] += 1
    return shares


def sample_blocks(
    rows: np.ndarray,
    n_blocks: int,
    size: int,
    rng: np.random.Generator,
    y: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """Draw ``n_blocks`` disjoint blocks of exactly ``size`` rows without replacement.

    With class codes ``y`` the draw is stratified: the classes are sampled in
    proportion to their frequency in ``rows`` and spread evenly over the blocks.

    Examples
    --------
    >>> blocks = sample_blocks(np.arange(20), 3, 4, np.random.default_rng(0))
    >>> [len(b) for b in blocks], len(np.unique(np.concatenate(blocks)))
    ([4, 4, 4], 12)
    """
    rows = np.asarray(rows, dtype=_INDEX)
    total = n_blocks * size
    if y is None:
        order = rng.permutation(rows)[:total]
    else:
        labels = y[rows]
        values, counts = np.unique(labels, return_counts=True)
        shares = largest_remainder(total, counts)
        order = np.concatenate(
            [
                rng.permutation(rows[labels == value])[:share]
                for value, share in zip(values, shares, strict=True)
            ]
        ).astype(_INDEX)
    return deal(order, n_blocks)


def site_blocks(sites: np.ndarray) -> tuple[tuple[Any, ...], tuple[np.ndarray, ...]]:
    """Group rows by site id: the sorted distinct ids and the rows of each.

    Examples
    --------
    >>> ids, blocks = site_blocks(np.array(["b", "a", "b"]))
    >>> ids, [b.tolist() for b in blocks]
    (('a', 'b'), [[1], [0, 2]])
    """
    values = np.unique(sites)
    blocks = tuple(np.flatnonzero(sites == value).astype(_INDEX) for value in values)
    return tuple(value.item() for value in values), blocks


def contiguous_groups(columns: np.ndarray, n_groups: int) -> tuple[np.ndarray, ...]:
    """Cut ``columns`` (in order) into ``n_groups`` contiguous near-equal groups.

    Examples
    --------
    >>> [g.tolist() for g in contiguous_groups(np.arange(7), 3)]
    [[0, 1, 2], [3, 4], [5, 6]]
    """
    return tuple(part.astype(_INDEX) for part in np.array_split(columns, n_groups))


def shared_count(fraction: float, size: int) -> int:
    """How many of a block's ``size`` indices an overlap ``fraction`` shares: ⌊fraction·size⌋.

    Never the whole block.

    Examples
    --------
    >>> shared_count(0.29, 100), shared_count(0.5, 5), shared_count(0.9, 1)
    (29, 2, 0)
    """
    return max(0, min(size - 1, math.floor(fraction * size + 1e-9)))


def shared_rows(
    blocks: Sequence[np.ndarray], fraction: float, rng: np.random.Generator
) -> tuple[np.ndarray, ...]:
    """Rows each block receives from the previous one (cyclically): a random ⌊fraction·n⌋.

    Entry ``h`` holds rows of ``blocks[h - 1]``; with fewer than two blocks nothing is shared.

    Examples
    --------
    >>> extra = shared_rows([np.arange(4), np.arange(4, 8)], 0.5, np.random.default_rng(0))
    >>> [len(e) for e in extra], bool(set(extra[1]) <= {0, 1, 2, 3})
    ([2, 2], True)
    """
    empty = np.empty(0, dtype=_INDEX)
    if len(blocks) < 2 or fraction == 0.0:
        return tuple(empty for _ in blocks)
    return tuple(
        np.sort(
            rng.choice(
                blocks[h - 1], size=shared_count(fraction, len(blocks[h - 1])), replace=False
            )
        ).astype(_INDEX)
        for h in range(len(blocks))
    )


def shared_columns(groups: Sequence[np.ndarray], fraction: float) -> tuple[np.ndarray, ...]:
    """Columns each group receives from the previous one (cyclically): its last ⌊fraction·n⌋.

    Examples
    --------
    >>> [c.tolist() for c in shared_columns([np.arange(4), np.arange(4, 8)], 0.5)]
    [[6, 7], [2, 3]]
    """
    empty = np.empty(0, dtype=_INDEX)
    if len(groups) < 2 or fraction == 0.0:
        return tuple(empty for _ in groups)
    extra = []
    for g in range(len(groups)):
        previous = np.asarray(groups[g - 1], dtype=_INDEX)
        count = shared_count(fraction, len(previous))
        extra.append(previous[len(previous) - count :] if count else empty)
    return tuple(extra)
