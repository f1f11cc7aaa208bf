"""Clusters of a sample group's rows, and the means a client sends of them (pure numpy).

Hybrid FedGraph's clients send cluster means of their embeddings and labels instead of the
embeddings themselves. The clusters are drawn from the sample ids and labels only, with a
seed the clients of one sample group share, so every client of the group forms the same
clusters without looking at its embeddings:

- :func:`random_clusters`: the rows shuffled and cut into clusters of size ``s``;
- :func:`class_conditioned_clusters` (CRC): each cluster takes ``round(r * s)`` rows of one
  class (the class with the most rows left) and fills up with rows of the other classes;
- :func:`kmeans_clusters`: K-means on embeddings (the paper's comparison, which needs the
  embeddings in one place).

A cluster is a list of positions into the group's rows; every row falls in exactly one
cluster (the last cluster keeps the fewer-than-``s`` rows left over).
"""

from __future__ import annotations

import numpy as np

from fedsec.seeding import keyed_generator


def n_clusters(n_rows: int, size: int) -> int:
    """How many clusters ``n_rows`` rows make at size ``size`` (at least one).

    Examples
    --------
    >>> n_clusters(100, 10), n_clusters(105, 10), n_clusters(3, 10)
    (10, 10, 1)
    """
    return max(1, n_rows // size)


def _fold_leftover(clusters: list[np.ndarray], leftover: np.ndarray) -> list[np.ndarray]:
    if len(leftover) == 0:
        return clusters
    if not clusters:
        return [leftover]
    clusters[-1] = np.concatenate([clusters[-1], leftover])
    return clusters


def random_clusters(n_rows: int, size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The rows shuffled and cut into ``n_rows // size`` clusters (the last one larger).

    Examples
    --------
    >>> parts = random_clusters(7, 3, np.random.default_rng(0))
    >>> sorted(len(p) for p in parts), sorted(np.concatenate(parts).tolist())
    ([3, 4], [0, 1, 2, 3, 4, 5, 6])
    """
    order = rng.permutation(n_rows)
    k = n_clusters(n_rows, size)
    clusters = [order[i * size:(i + 1) * size] for i in range(k)]
    return _fold_leftover(clusters, order[k * size:])


def class_conditioned_clusters(y: np.ndarray, size: int, in_class: float,
                               rng: np.random.Generator) -> list[np.ndarray]:
    """Class-conditioned random clustering (CRC) of rows with labels ``y``.

    Each cluster takes ``round(in_class * size)`` rows of the class with the most rows left
    (ties broken at random) and ``size`` minus that of the other classes' rows, all drawn at
    random; when a class runs out the cluster takes what is left. The rows left over at the
    end (fewer than ``size``) join the last cluster.

    Examples
    --------
    >>> y = np.array([0] * 10 + [1] * 10)
    >>> parts = class_conditioned_clusters(y, 5, 0.8, np.random.default_rng(0))
    >>> [int(np.bincount(y[p], minlength=2).max()) for p in parts]
    [4, 4, 4, 4]
    """
    y = np.asarray(y)
    pools = {int(c): list(rng.permutation(np.flatnonzero(y == c))) for c in np.unique(y)}
    own = min(size, max(0, round(in_class * size)))
    clusters = []
    for _ in range(n_clusters(len(y), size) if len(y) >= size else 0):
        counts = {c: len(p) for c, p in pools.items()}
        top = max(counts.values())
        anchor = int(rng.choice([c for c, n in counts.items() if n == top]))
        members = [pools[anchor].pop() for _ in range(min(own, len(pools[anchor])))]
        others = [(c, i) for c, p in pools.items() if c != anchor for i in range(len(p))]
        need = size - len(members)
        if need and others:
            picks = rng.choice(len(others), size=min(need, len(others)), replace=False)
            chosen: dict[int, list[int]] = {}
            for k in picks:
                c, i = others[int(k)]
                chosen.setdefault(c, []).append(i)
            for c, positions in chosen.items():
                for i in sorted(positions, reverse=True):
                    members.append(pools[c].pop(i))
        while len(members) < size and pools[anchor]:
            members.append(pools[anchor].pop())
        clusters.append(np.array(members, dtype=np.intp))
    leftover = np.array([i for p in pools.values() for i in p], dtype=np.intp)
    return _fold_leftover(clusters, leftover)


def kmeans_clusters(embeddings: np.ndarray, size: int, seed: int) -> list[np.ndarray]:
    """K-means (scikit-learn, k-means++, 4 starts) into ``n_rows // size`` clusters."""
    from sklearn.cluster import KMeans

    k = n_clusters(len(embeddings), size)
    labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(embeddings)
    return [np.flatnonzero(labels == c) for c in range(k) if np.any(labels == c)]


def cluster_means(values: np.ndarray, clusters: list[np.ndarray]) -> np.ndarray:
    """The mean row of ``values`` over each cluster, one row per cluster.

    Examples
    --------
    >>> cluster_means(np.arange(8.0).reshape(4, 2), [np.array([0, 1]), np.array([2, 3])])
    array([[1., 2.],
           [5., 6.]])
    """
    return np.stack([np.asarray(values)[c].mean(axis=0) for c in clusters])


def membership(n_rows: int, clusters: list[np.ndarray]) -> np.ndarray:
    """Each row's cluster index (-1 for a row in none).

    Examples
    --------
    >>> membership(4, [np.array([2]), np.array([0, 3])]).tolist()
    [1, -1, 0, 1]
    """
    out = np.full(n_rows, -1, dtype=np.int64)
    for k, c in enumerate(clusters):
        out[c] = k
    return out


def one_hot(y: np.ndarray, n_classes: int) -> np.ndarray:
    """Labels as one-hot rows (float64)."""
    out = np.zeros((len(y), n_classes))
    out[np.arange(len(y)), np.asarray(y, dtype=np.intp)] = 1.0
    return out


def draw_clusters(mode: str, y: np.ndarray, size: int, in_class: float,
                  seed: bytes) -> list[np.ndarray]:
    """A sample group's clusters from its labels and the seed its clients share.

    ``mode`` is ``crc`` or ``random``. Every client of the group calls this with the same
    labels and seed and gets the same clusters; so does anyone else who holds them (a client
    of the group colluding with the server).

    Examples
    --------
    >>> y = np.array([0, 0, 1, 1])
    >>> a = draw_clusters("crc", y, 2, 1.0, bytes(32))
    >>> b = draw_clusters("crc", y, 2, 1.0, bytes(32))
    >>> [c.tolist() for c in a] == [c.tolist() for c in b]
    True
    """
    rng = keyed_generator(bytes(seed))
    if mode == "crc":
        return class_conditioned_clusters(y, size, in_class, rng)
    if mode == "random":
        return random_clusters(len(y), size, rng)
    raise ValueError(f"no clusters are drawn under clustering {mode!r}")


def membership_matrix(n_rows: int, clusters: list[np.ndarray]) -> np.ndarray:
    """The ``(clusters, rows)`` matrix whose product with per-row values gives the means.

    Examples
    --------
    >>> membership_matrix(3, [np.array([0, 2]), np.array([1])]).tolist()
    [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]]
    """
    A = np.zeros((len(clusters), n_rows))
    for k, c in enumerate(clusters):
        A[k, c] = 1.0 / len(c)
    return A
