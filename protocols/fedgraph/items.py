"""The server's training items: per sample group, each client's (cluster-mean) embeddings.

An item is a training row (embeddings sent raw) or a cluster (cluster means); it is held by
the clients of its sample group. :func:`stack_items` lays the items out as the GCN reads them:
embeddings ``(B, K, e)`` with zeros where a client holds nothing, the holders ``(B, K)``, and
the targets ``(B, C)`` (one-hot rows, or a cluster's mean label).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fedsec.errors import ValidationError
from fedsec.protocols.fedgraph.clustering import cluster_means


@dataclass(frozen=True)
class GroupItems:
    """One sample group's items: its clients' embeddings (one row per item) and targets."""

    members: tuple[str, ...]
    embeddings: Mapping[str, np.ndarray]
    targets: np.ndarray


def stack_items(clients: Sequence[str], groups: Sequence[GroupItems]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(embeddings (B, K, e), holders (B, K), targets (B, C))`` over every group's items.

    Examples
    --------
    >>> g = GroupItems(("b",), {"b": np.ones((2, 3))}, np.eye(2))
    >>> E, M, T = stack_items(["a", "b"], [g])
    >>> E.shape, M.tolist()
    ((2, 2, 3), [[0.0, 1.0], [0.0, 1.0]])
    """
    index = {c: k for k, c in enumerate(clients)}
    width = next(iter(groups[0].embeddings.values())).shape[1]
    total = sum(len(g.targets) for g in groups)
    E = np.zeros((total, len(clients), width), dtype=np.float32)
    M = np.zeros((total, len(clients)), dtype=np.float32)
    start = 0
    for g in groups:
        stop = start + len(g.targets)
        for member in g.members:
            E[start:stop, index[member]] = g.embeddings[member]
            M[start:stop, index[member]] = 1.0
        start = stop
    return E, M, np.concatenate([g.targets for g in groups])


def positions(rows: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of ``wanted`` stands in ``rows`` (every one must be there).

    Examples
    --------
    >>> positions(np.array([4, 7, 9]), np.array([9, 4])).tolist()
    [2, 0]
    """
    where = {r: i for i, r in enumerate(np.asarray(rows).tolist())}
    return np.array([where[r] for r in np.asarray(wanted).tolist()], dtype=np.intp)


def select_rows(values: np.ndarray, rows: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The rows of ``values`` (whose row ``i`` is training row ``rows[i]``) for ``wanted``.

    Examples
    --------
    >>> select_rows(np.array([[1.0], [2.0], [3.0]]), np.array([4, 7, 9]), np.array([9, 4]))
    array([[3.],
           [1.]])
    """
    return np.asarray(values)[positions(rows, wanted)]


def clustered(group: GroupItems, clusters: list[np.ndarray]) -> GroupItems:
    """A group of raw items turned into cluster means (``clusters``: item positions)."""
    return GroupItems(group.members,
                      {m: cluster_means(e, clusters) for m, e in group.embeddings.items()},
                      cluster_means(group.targets, clusters))


def clusterable(groups: list[tuple[tuple[str, ...], np.ndarray]], raw: list[GroupItems],
                sizes: dict[str, int]
                ) -> tuple[list[tuple[tuple[str, ...], np.ndarray]], list[GroupItems]]:
    """The sample groups whose clients may send cluster means: those of at least the group's
    ``s`` rows (a client never sends the mean of fewer than ``s`` rows)."""
    keep = [i for i, (members, rows) in enumerate(groups) if len(rows) >= sizes[members[0]]]
    if not keep:
        largest = max(len(rows) for _, rows in groups)
        raise ValidationError(
            f"fedgraph: every sample group holds fewer rows than its cluster size s (at "
            f"least {min(sizes.values())}; the largest group holds {largest}), and a client "
            "never sends the mean of fewer than s rows. Lower cluster_size, or let clients "
            "share more rows (a larger 'samples' share in the partition).")
    return [groups[i] for i in keep], [raw[i] for i in keep]
