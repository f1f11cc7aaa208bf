"""Cluster disaggregation on Hybrid FedGraph: per-row embeddings from re-drawn cluster means.

A cluster mean hides its rows only once. When a sample group's clients re-draw their
clusters (``redraws`` > 1, as when clusters are re-drawn across epochs) and one client of the
group colludes with the server, the colluder knows every draw's memberships: it holds (or
drew) each draw's seed, the group's row ids and labels, and the clustering rule is public.
Each draw ``d`` gives the server ``M_d = A_d Z`` for every client of the group, where ``Z``
are that client's per-row embeddings and ``A_d`` averages rows into clusters; stacking the
draws and solving the least-squares system gives ``Z`` back once the stacked ``A`` has full
column rank (about ``s`` draws for clusters of size ``s``: each draw adds ``n/s - 1``
independent rows). With fewer draws the minimum-norm solution is what the means allow.

The coalition is the server and one client of the group (``server,party2``); the target is
every client of the group whose means the server received, the colluder included. A
target's estimate is its embeddings of every training row it sent means of, so it is made
only when the coalition knows the clusters of each of the target's sample groups (always,
when every client holds every row, the paper's setting); other targets are listed in
``info``. A group held by one client alone never sends its seed, so only that client knows
its clusters. The baseline gives each row
its cluster's mean in the first draw (what one clustering reveals). Score with
``reconstruction-error`` against the client's embeddings
(:data:`~fedsec.protocols.fedgraph.tags.TRAIN_EMBEDDINGS_HELD`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from fedsec.attacks.fedgraph.family import FedGraphAttack
from fedsec.attacks.fedgraph.observed import opened
from fedsec.outcomes import Reconstruction
from fedsec.private_store import held_shard, value_key
from fedsec.protocols.fedgraph import clustering, tags
from fedsec.registry import register
from fedsec.view import View

Group = tuple[str, ...]


def disaggregate(blocks: list[np.ndarray], means: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """The per-row values ``Z`` with ``blocks[d] @ Z = means[d]`` for every draw (least
    squares, minimum norm), and the stacked system's rank (``Z`` is exact at full rank).

    Examples
    --------
    >>> Z = np.array([[1.0], [2.0], [4.0]])
    >>> A1 = clustering.membership_matrix(3, [np.array([0, 1]), np.array([2])])
    >>> A2 = clustering.membership_matrix(3, [np.array([0]), np.array([1, 2])])
    >>> est, rank = disaggregate([A1, A2], [A1 @ Z, A2 @ Z])
    >>> np.round(est.ravel(), 6).tolist(), rank
    ([1.0, 2.0, 4.0], 3)
    """
    A = np.vstack(blocks)
    M = np.vstack(means)
    Z, _, rank, _ = np.linalg.lstsq(A, M, rcond=None)
    return Z, int(rank)


@register("attack", "cluster-disaggregation")
class ClusterDisaggregation(FedGraphAttack):
    """FedGraph: a client of the sample group, colluding with the server, re-draws the clusters from
    the shared seeds and solves the cluster means for every client's per-row embeddings.

    Per-row embeddings from a group's re-drawn cluster means (a colluder knows the seeds).
    """

    default_scorer = "reconstruction-error"
    closed_form = True
    needs_tags = frozenset({tags.CLUSTER_SEED, tags.CLUSTER_EMBEDDINGS})

    def unmet(self, view: View) -> str | None:
        if not self._draws(view):
            return (f"{view.threat} knows no sample group's clusters: join the server with a "
                    "client of the group (for example 'server,party2'), whose labels and "
                    "seeds fix them")
        return None

    def _draws(self, view: View) -> dict[Group, tuple[np.ndarray, dict[int, list[np.ndarray]]]]:
        """The groups a coalition client belongs to: their rows, and every draw's clusters
        (a draw's seed reaches each member: the clusters are drawn once per draw)."""
        out: dict[Group, tuple[np.ndarray, dict[int, list[np.ndarray]]]] = {}
        unknown: set[Group] = set()
        for m in view.select(tag=tags.CLUSTER_SEED):
            group, draw = tuple(m.meta[tags.GROUP]), int(m.meta[tags.DRAW])
            if group in unknown or (group in out and draw in out[group][1]):
                continue
            rows = np.asarray(m.meta[tags.ROWS], dtype=np.int64)
            labels = self._labels(view, group, rows)
            if labels is None:
                unknown.add(group)
                continue
            out.setdefault(group, (rows, {}))[1][draw] = clustering.draw_clusters(
                str(m.meta[tags.CLUSTERING]), labels, int(m.meta[tags.CLUSTER_SIZE]),
                float(m.meta[tags.IN_CLASS]), bytes(opened(view, m)))
        return out

    def _labels(self, view: View, group: Group, rows: np.ndarray) -> np.ndarray | None:
        """The group's labels, from a coalition client of the group (None: no such client)."""
        for name in group:
            held = view.knowledge.get(name, {})
            own_rows = held.get(held_shard(0, "rows"))
            y = held.get(held_shard(0, "y"))
            if own_rows is not None and y is not None:
                where = {r: i for i, r in enumerate(np.asarray(own_rows).tolist())}
                return np.asarray(y)[[where[r] for r in rows.tolist()]]
        return None

    def run(self, view: View) -> Reconstruction:
        draws = self._draws(view)
        sent: dict[str, dict[Group, dict[int, np.ndarray]]] = defaultdict(
            lambda: defaultdict(dict))
        for m in view.select(tag=tags.CLUSTER_EMBEDDINGS):
            if view.can_open(m):
                sent[m.sender][tuple(m.meta[tags.GROUP])][int(m.meta[tags.DRAW])] = np.asarray(
                    opened(view, m), dtype=np.float64)
        estimates, baseline, skipped = {}, {}, []
        ranks: list[float] = []
        for target, groups in sorted(sent.items()):
            if any(group not in draws for group in groups):
                skipped.append(target)
                continue
            parts = [self._solve(draws[g][1], draws[g][0], groups[g], ranks) for g in groups]
            ids = np.concatenate([rows for rows, _, _ in parts])
            order = np.argsort(ids, kind="stable")
            key = value_key(target, tags.TRAIN_EMBEDDINGS_HELD)
            estimates[key] = np.concatenate([z for _, z, _ in parts])[order]
            baseline[key] = np.concatenate([b for _, _, b in parts])[order]
        info: dict[str, Any] = {"targets_skipped": skipped,
                                "draws": max((len(d) for _, d in draws.values()), default=0),
                                "rank_share_min": min(ranks, default=float("nan"))}
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info=info)

    @staticmethod
    def _solve(draws: dict[int, list[np.ndarray]], rows: np.ndarray,
               means: dict[int, np.ndarray], ranks: list[float]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One group of one target: its rows, the solved embeddings, the first draw's means
        spread over the rows."""
        used = sorted(d for d in means if d in draws)
        blocks = [clustering.membership_matrix(len(rows), draws[d]) for d in used]
        Z, rank = disaggregate(blocks, [means[d] for d in used])
        ranks.append(rank / len(rows))
        first = used[0]
        spread = means[first][clustering.membership(len(rows), draws[first])]
        return rows, Z, spread
