"""The median heuristic for FDSKL's kernel width, computed across a vertical partition.

The width is the median distance between two training samples (Euclidean for the RBF kernel,
L1 for the Laplace kernel), over ``n_pairs`` pairs drawn from a stream derived from the run's
secret seed (the centralized DSG draws the same pairs). No worker holds a whole row, but both
distances are sums over the feature groups: a worker's *partial distance* of a pair is the sum
of the squared (RBF) or absolute (Laplace) differences over its own columns. So:

1. the requester sends the pairs down T1 (:data:`tags.WIDTH_PAIRS`);
2. every other worker adds a fresh mask to its vector of partial distances (drawn from its own
   stream, uniform on ``[0, 2 pi]`` like Algorithm 3's fresh offsets) and the vectors are summed
   along T1 (:data:`tags.PARTIAL_DISTANCE`);
3. the masks are summed along a second tree over the workers but the requester
   (:func:`fedsec.protocols.fdskl.plans.total_tree`: no single worker, the requester included,
   can combine what it sees into anything but the total) and delivered to the requester
   (:data:`tags.DISTANCE_MASK`), which removes them;
4. the requester takes the median and sends the width down T1 (:data:`tags.KERNEL_WIDTH`).

What it reveals: the requester learns every sampled pair's full distance. Masks of a known
distribution hide a partial distance from the worker that receives it only statistically, as
Algorithm 3's offsets hide a partial product. With ``offsets="none"`` the partial distances
travel unmasked along T1 and there is no second tree.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fedsec.backends import prg
from fedsec.errors import ValidationError
from fedsec.network import Network
from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.sums import broadcast_down, tree_sum
from fedsec.protocols.fdskl.trees import Tree
from fedsec.seeding import keyed_generator

MASK_HIGH = 2.0 * np.pi
"""Masks are uniform on [0, MASK_HIGH], like Algorithm 3's fresh offsets."""


def pair_sample(seed: int, n_samples: int, n_pairs: int) -> np.ndarray:
    """``n_pairs`` pairs of distinct samples (``n_pairs × 2``), from the run's pair stream.

    Examples
    --------
    >>> pairs = pair_sample(0, 5, 4)
    >>> pairs.shape, bool((pairs[:, 0] != pairs[:, 1]).all())
    ((4, 2), True)
    """
    if n_samples < 2:
        raise ValidationError(
            f"The median kernel width needs at least 2 training samples; got {n_samples}. Set "
            "width_rule=scale or a kernel_width.")
    rng = keyed_generator(prg.simulation_key(seed, tags.WIDTH_PAIRS_KEY))
    first = rng.integers(0, n_samples, size=n_pairs)
    second = (first + rng.integers(1, n_samples, size=n_pairs)) % n_samples
    return np.column_stack([first, second])


def partial_distances(X: np.ndarray, pairs: np.ndarray, *, kernel: str) -> np.ndarray:
    """Per pair, the part of its distance over the columns of ``X``: sums of squared (rbf) or
    absolute (laplace) differences. Summed over the feature groups they give the whole.

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [3.0, 5.0]])
    >>> pairs = np.array([[0, 1]])
    >>> partial_distances(X, pairs, kernel="rbf").tolist(), partial_distances(
    ...     X, pairs, kernel="laplace").tolist()
    ([25.0], [7.0])
    """
    diff = X[pairs[:, 0]] - X[pairs[:, 1]]
    if kernel == "laplace":
        return np.abs(diff).sum(axis=1)
    return (diff**2).sum(axis=1)


def median_width(total: np.ndarray, *, kernel: str) -> float:
    """The width from the pairs' whole distances: the median of ``sqrt(total)`` (rbf: ``total``
    holds squared distances) or of ``total`` (laplace); 1 when every pair coincides.

    Examples
    --------
    >>> median_width(np.array([1.0, 4.0, 9.0]), kernel="rbf")
    2.0
    """
    distances = np.sqrt(np.maximum(total, 0.0)) if kernel == "rbf" else total
    width = float(np.median(distances))
    return width if width > 0 else 1.0


def centralized_width(X: np.ndarray, seed: int, n_pairs: int, *, kernel: str) -> float:
    """The median width on pooled rows (DSG's reference)."""
    pairs = pair_sample(seed, X.shape[0], n_pairs)
    return median_width(partial_distances(X, pairs, kernel=kernel), kernel=kernel)


def federated_width(net: Network, t1: Tree, masks_tree: Tree | None, requester: str,
                    X: Mapping[str, np.ndarray], pairs: np.ndarray,
                    rngs: Mapping[str, np.random.Generator], *, kernel: str) -> float:
    """Steps 1–3 of the module's procedure; the width as the requester computes it.

    ``masks_tree`` None: no masks (``offsets="none"``). ``X`` holds each worker's columns with
    rows in training order; ``rngs`` are the workers' own streams.
    """
    broadcast_down(net, t1, pairs.T.astype(np.int64), tags.WIDTH_PAIRS, {})
    values: dict[str, np.ndarray] = {}
    masks: dict[str, np.ndarray] = {}
    for w, Xw in X.items():
        with net.compute(w):
            values[w] = partial_distances(Xw, pairs, kernel=kernel)
            if masks_tree is not None and w != requester:
                masks[w] = np.asarray(rngs[w].uniform(0.0, MASK_HIGH, size=pairs.shape[0]))
                values[w] = values[w] + masks[w]
    total = tree_sum(net, t1, values, tags.PARTIAL_DISTANCE, {tags.TREE: tags.TREE_SUMS})
    if masks_tree is not None:
        removed = tree_sum(net, masks_tree, masks, tags.DISTANCE_MASK,
                           {tags.TREE: tags.TREE_OFFSETS}, deliver_to=requester)
        with net.compute(requester):
            total = total - removed
    with net.compute(requester):
        return median_width(total, kernel=kernel)
