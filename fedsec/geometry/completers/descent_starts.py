"""Starting configurations for the point-based EDM completers (Alternating Descent).

Three starts besides a random one:

- ``zeros``: every point at the origin, the start of the reference implementation the seed
  paper ran (I. Dokmanic, R. Parhizkar, edmbox ``alternating_descent.m``, LCAV, 2014-2015);
- shortest paths: classical MDS of the known distances completed by shortest paths through
  them (the MDS-MAP start of sensor localisation; Shang, Ruml, Zhang, Fromherz, "Localization
  from mere connectivity", MobiHoc 2003);
- anchored: when some ``dim + 1`` or more points have all their mutual distances known (the
  landmarks of the FedCG attack, whose ``D_W`` is known), classical MDS places them, and every
  point with ``dim + 1`` known distances to placed points is placed by linear least squares
  (multilateration), repeatedly; points still unplaced take their shortest-path position
  carried onto the placed ones by a rigid motion. With exact distances and anchors in general
  position this start is already the solution; the descent then only confirms it.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import shortest_path

from fedsec.geometry.edm import classical_mds, procrustes_align


def shortest_path_start(values: np.ndarray, known: np.ndarray, dim: int) -> np.ndarray:
    """Classical MDS of the known distances completed by shortest paths.

    Unknown distances become the shortest path length through known ones (an
    upper bound by the triangle inequality); pairs in different connected
    components get twice the largest finite length.
    """
    rows, cols = np.nonzero(known)
    lengths = np.sqrt(np.maximum(values[rows, cols], 0.0))
    floor = 1e-12 * max(float(lengths.max()), 1e-300) if lengths.size else 1.0
    graph = sparse.csr_matrix((np.maximum(lengths, floor), (rows, cols)), shape=known.shape)
    paths = shortest_path(graph, method="D", directed=False)
    finite = np.isfinite(paths)
    paths[~finite] = 2.0 * paths[finite].max() if finite.any() else 1.0
    return classical_mds(paths**2, dim)


def anchor_clique(known: np.ndarray) -> np.ndarray:
    """A set of points whose mutual distances are all known, built greedily by degree.

    Examples
    --------
    >>> known = ~np.eye(4, dtype=bool)
    >>> known[0, 1] = known[1, 0] = False  # 0 and 1 never measured each other
    >>> anchor_clique(known).tolist()
    [2, 3, 0]
    """
    kept: list[int] = []
    for point in np.argsort(-known.sum(axis=1), kind="stable"):
        if known[point, kept].all():
            kept.append(int(point))
    return np.array(kept, dtype=np.int64)


def multilaterate_points(D: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """Points from squared distances ``D`` (rows) to ``anchors`` by linear least squares.

    ``D_j = ||x||^2 - 2 a_j . x + ||a_j||^2`` is linear in ``(x, ||x||^2)``; with
    ``dim + 1`` anchors in general position the solution is exact for exact distances.

    Examples
    --------
    >>> anchors = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> D = ((np.array([[0.3, 0.6]])[:, None] - anchors[None]) ** 2).sum(-1)
    >>> multilaterate_points(D, anchors).round(9).tolist()
    [[0.3, 0.6]]
    """
    A = np.hstack([-2.0 * anchors, np.ones((len(anchors), 1))])
    rhs = D - (anchors**2).sum(axis=1)[None, :]
    solution, *_ = np.linalg.lstsq(A, rhs.T, rcond=None)
    return solution[:-1].T


def anchored_start(values: np.ndarray, known: np.ndarray, dim: int) -> np.ndarray:
    """Multilateration from a fully known clique of ``dim + 1`` or more points.

    Falls back to :func:`shortest_path_start` when no such clique exists.
    """
    clique = anchor_clique(known)
    if clique.size < dim + 1:
        return shortest_path_start(values, known, dim)
    X = np.zeros((known.shape[0], dim))
    X[clique] = classical_mds(values[np.ix_(clique, clique)], dim)
    placed = np.zeros(known.shape[0], dtype=bool)
    placed[clique] = True
    while True:
        ready = ~placed & (known[:, placed].sum(axis=1) >= dim + 1)
        if not ready.any():
            break
        anchors = np.flatnonzero(placed)
        candidates = np.flatnonzero(ready)
        patterns = known[np.ix_(candidates, anchors)]
        for pattern in np.unique(patterns, axis=0):
            rows = candidates[(patterns == pattern).all(axis=1)]
            used = anchors[pattern]
            X[rows] = multilaterate_points(values[np.ix_(rows, used)], X[used])
        placed[candidates] = True
    if not placed.all():
        rest = shortest_path_start(values, known, dim)
        _, move = procrustes_align(rest[placed], X[placed])
        X[~placed] = rest[~placed] @ move["rotation"] + move["translation"]
    return X
