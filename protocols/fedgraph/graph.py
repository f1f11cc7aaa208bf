"""The server's client graph and the sample groups (pure numpy).

Nodes are clients. Two clients are joined when they share a feature; the edge feature is
the indicator of the shared features over all ``d`` columns (a client's self-loop carries
its own features). A sample group is a set of training rows held by the same clients.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def edge_features(columns: Sequence[np.ndarray], n_features: int) -> np.ndarray:
    """``(K, K, d)``: entry ``[a, b, f]`` is 1 when clients ``a`` and ``b`` both hold ``f``.

    Examples
    --------
    >>> F = edge_features([np.array([0, 1]), np.array([1, 2])], 3)
    >>> F[0, 1].tolist(), F[0, 0].tolist()
    ([0.0, 1.0, 0.0], [1.0, 1.0, 0.0])
    """
    held = np.zeros((len(columns), n_features))
    for k, cols in enumerate(columns):
        held[k, np.asarray(cols, dtype=np.intp)] = 1.0
    return held[:, None, :] * held[None, :, :]


def adjacency(features: np.ndarray) -> np.ndarray:
    """``(K, K)``: 1 where two clients share a feature (the diagonal: every client).

    Examples
    --------
    >>> adjacency(edge_features([np.array([0]), np.array([1])], 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return (features.sum(axis=2) > 0).astype(np.float64)


def sample_groups(holders: Mapping[str, np.ndarray], clients: Sequence[str]
                  ) -> list[tuple[tuple[str, ...], np.ndarray]]:
    """The sample groups: ``(clients holding the rows, the rows)``, largest group first.

    ``holders`` maps each client to the training rows it holds.

    Examples
    --------
    >>> sample_groups({"a": np.array([0, 1]), "b": np.array([1, 2])}, ["a", "b"])
    [(('a',), array([0])), (('a', 'b'), array([1])), (('b',), array([2]))]
    """
    rows = np.unique(np.concatenate([np.asarray(r) for r in holders.values()]))
    keys: dict[tuple[str, ...], list[int]] = {}
    held = {c: set(np.asarray(holders[c]).tolist()) for c in clients}
    for row in rows.tolist():
        key = tuple(c for c in clients if row in held[c])
        keys.setdefault(key, []).append(row)
    groups = [(key, np.array(members, dtype=np.intp)) for key, members in keys.items()]
    return sorted(groups, key=lambda g: (-len(g[1]), g[0]))
