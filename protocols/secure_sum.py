"""Secure sum: each party holds a vector; a coordinator learns only their sum.

The textbook building block of secure aggregation (Bonawitz et al., "Practical
Secure Aggregation for Privacy-Preserving Machine Learning", CCS 2017): here
each data party's vector is a local statistic of its shard (column sums and
row count, optionally sums of squares), so the sum yields the pooled mean and
variance of every feature. Whether the aggregator also learns individual
vectors depends only on the masking backend, which is what an audit checks.
Nothing is trained: the result's ``model`` is None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fedsec.backends.primitives import CONTRIBUTION_TAG, secure_sum
from fedsec.interfaces import Defense, MaskingBackend, Protocol, apply_transforms
from fedsec.outcomes import Outcome
from fedsec.registry import register
from fedsec.validation import check_choice

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation

AGGREGATOR = "aggregator"
RESULT_TAG = "secure_sum.result"


def local_statistic(X: np.ndarray, statistic: str) -> np.ndarray:
    """One party's vector: column sums then the row count (then sums of squares for moments).

    Examples
    --------
    >>> local_statistic(np.array([[1.0, 2.0], [3.0, 4.0]]), "sum").tolist()
    [4.0, 6.0, 2.0]
    """
    X = np.asarray(X, dtype=float)
    parts = [X.sum(axis=0), np.array([X.shape[0]], dtype=float)]
    if statistic == "moments":
        parts.append((X**2).sum(axis=0))
    return np.concatenate(parts)


def sum_error(total: np.ndarray, exact: np.ndarray) -> float:
    """``||total - exact|| / ||exact||``: what masking and defences added to the sum.

    Examples
    --------
    >>> sum_error(np.array([3.0, 4.0]), np.array([3.0, 4.0]))
    0.0
    >>> round(sum_error(np.array([3.0, 4.5]), np.array([3.0, 4.0])), 3)
    0.1
    """
    scale = float(np.linalg.norm(exact))
    gap = float(np.linalg.norm(np.asarray(total, dtype=float) - exact))
    return gap / scale if scale > 0 else gap


def pooled_moments(total: np.ndarray, n_features: int) -> dict[str, np.ndarray]:
    """Mean (and variance, when sums of squares are present) from a summed statistic."""
    count = total[n_features]
    mean = total[:n_features] / count
    out = {"mean": mean}
    if total.size == 2 * n_features + 1:
        out["variance"] = total[n_features + 1 :] / count - mean**2
    return out


@register("protocol", "secure-sum")
class SecureSum(Protocol):
    """Data parties send protected local statistics; the aggregator opens only the sum."""

    summary = ("Each party holds a vector; an aggregator learns only their sum "
               "(if the backend protects it).")
    paper = "Bonawitz et al., Practical Secure Aggregation for Privacy-Preserving ML, CCS 2017"
    partition_kinds = ("horizontal",)
    default_partition = "horizontal:parties=5"
    default_dataset = "pima"
    coordinators = ((AGGREGATOR, "aggregator"),)
    requires = frozenset({"sum"})
    exposes = frozenset({CONTRIBUTION_TAG, RESULT_TAG})

    @dataclass(frozen=True, kw_only=True)
    class Params:
        statistic: str = "sum"
        """What each party's vector holds: sum (column sums and row count: the pooled mean) or
        moments (also sums of squares: the pooled variance)."""

        def __post_init__(self) -> None:
            check_choice(self.statistic, owner="protocol 'secure-sum'", name="statistic",
                         choices=("sum", "moments"))

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        net = federation.network
        senders = federation.data_parties()
        vectors = {}
        with net.stage("contribute", round=0):
            for party in senders:
                with net.compute(party.name):
                    vector = local_statistic(party.held_shard().X, self.params.statistic)
                    party.private["vector"] = vector
                    vectors[party.name] = apply_transforms(defenses, party, CONTRIBUTION_TAG,
                                                           vector)
            total = secure_sum(federation, backend, vectors, AGGREGATOR,
                               meta={"statistic": self.params.statistic})
        with net.stage("result", round=0):
            net.broadcast(AGGREGATOR, [p.name for p in senders], RESULT_TAG, total)
        exact = np.sum([p.private["vector"] for p in senders], axis=0)
        return Outcome(metrics={"n_senders": len(senders), "vector_length": int(total.size),
                                "sum_relative_error": sum_error(total, exact)},
                       values={"sum": total})

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        total = local_statistic(train.X, self.params.statistic)
        return Outcome(values={"sum": total})
