"""Scoring permuted rows: pair each estimated row with a true record, then measure.

Shared rows of data collaboration (NRI-DC) arrive permuted. For errors, the
``matched-rows`` scorer (and ``epsilon-dr``) compare each estimated row with the
record it came from (the truth's permutation: the auditor's knowledge, never
the attack's); where the truth holds no permutation, with a distinct true row
by optimal assignment (Hungarian method,
:func:`scipy.optimize.linear_sum_assignment`, on squared distances), which
flatters any estimate.

Re-identification is another question: which record would an adversary link a
row to? Optimal assignment answers it too well: it gives back every row of any
exact orthogonal projection of the records, a random one included, so it
measures the metric rather than the attack. ``matched-rows`` therefore links
rows by a stated rule (the nearest record by default; assignment only where the
adversary knows the pool is exactly the victim's records) in a stated pool
(the victim's records; every party's; or an auxiliary population, the victim's
records mixed with held-out records of the same dataset that no party holds,
the run's test split), and prints beside the rate what a random projection of
the same rank and a random guess reach in that pool.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from fedsec.declare import Choice, Int, owner_of
from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.private_store import auxiliary_key, parse_truth_key, truth_key
from fedsec.registry import register
from fedsec.scoring.reconstruction import (
    EpsilonParams,
    advantage,
    advantage_meaning,
    check_truth,
    mean_over_targets,
)

OWNER = "scorer 'matched-rows'"
SOURCE_ROWS = "shared_rows"
"""A party's private ``value/SOURCE_ROWS``: the record behind each row it shared (the secret
permutation), which ``reidentified`` needs."""
PAPER = ("Nosaka and Yoshise, Data Collaboration Analysis over Matrix Manifolds "
         "(arXiv:2403.02780), section 2.3")


def match_rows(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """For each estimated row, the distinct true row it is paired with (minimum total distance).

    Examples
    --------
    >>> match_rows(np.array([[5.0], [0.1]]), np.array([[0.0], [5.2]])).tolist()
    [1, 0]
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    if estimate.ndim != 2 or truth.ndim != 2 or estimate.shape[1] != truth.shape[1]:
        raise ValidationError(
            f"Rows of shape {estimate.shape} cannot be matched to rows of shape {truth.shape}."
        )
    if estimate.shape[0] > truth.shape[0]:
        raise ValidationError(
            f"{estimate.shape[0]} estimated rows cannot be matched to {truth.shape[0]} true rows."
        )
    rows, cols = linear_sum_assignment(cdist(estimate, truth, "sqeuclidean"))
    out = np.empty(estimate.shape[0], dtype=np.int64)
    out[rows] = cols
    return out


def matched_errors(estimate: np.ndarray, truth: np.ndarray,
                   source: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each estimated row's true record and its Euclidean error from it.

    The record is the one the row came from when ``source`` (the truth's permutation, the
    auditor's knowledge) is given; otherwise the optimal assignment of :func:`match_rows`,
    which flatters any estimate, a random one included (it picks the closest pairing).
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    if source is not None and source.shape == (len(estimate),):
        errors = np.linalg.norm(estimate - truth[source], axis=1)
        return source, errors
    pairing = match_rows(estimate, truth)
    errors = np.linalg.norm(np.asarray(estimate, dtype=np.float64) - truth[pairing], axis=1)
    return pairing, errors


def feature_targets(reconstruction: Reconstruction,
                    truth: Mapping[str, np.ndarray | bytes]) -> list[str]:
    """The estimated feature blocks (``.../X``), each checked against the ground truth."""
    keys = [k for k in reconstruction.estimates if k.endswith("/X")]
    check_truth(keys, truth)
    return keys


POOLS = ("victim", "federation", "auxiliary")
RULES = ("nearest", "assignment")


@dataclass(frozen=True, kw_only=True)
class RowsParams(EpsilonParams):
    """``epsilon`` (a record counts as recovered within it), the candidate ``pool`` a row is
    re-identified in (``victim``: the victim's own records; ``federation``: every party's
    records of the same features), the ``rule`` (``nearest`` record; ``assignment``: distinct
    records by optimal matching, only where the adversary knows the pool is exactly the
    victim's), and the ``seed`` of the random projection baseline."""

    pool: Annotated[str, Choice(*POOLS)] = "victim"
    """Candidate records a row is re-identified in: victim (the victim's own records), federation
    (every party's records of the same features) or auxiliary (the victim's records mixed with
    the run's held-out test records of the same features, which no party holds)."""
    rule: Annotated[str, Choice(*RULES)] = "nearest"
    """nearest record, or assignment (distinct records by optimal matching; only with
    pool=victim)."""
    seed: Annotated[int, Int(min=0)] = 0
    """Seed of the random projection baseline."""

    def __post_init__(self) -> None:
        if self.rule == "assignment" and self.pool != "victim":
            raise ValidationError(
                f"{owner_of(self)}: rule=assignment pairs each row with a distinct record, which "
                "assumes the pool is exactly the victim's records; use pool=victim, or "
                f"rule=nearest with pool={self.pool}.")


def record_pool(key: str, truth: Mapping[str, Any], pool: str
                ) -> tuple[np.ndarray, np.ndarray | None]:
    """The candidate records (the victim's first, so its row ids stay valid) and their labels
    (None when a block has none)."""
    if pool == "auxiliary":
        return _auxiliary_pool(key, truth)
    keys = [key]
    if pool == "federation":
        width = np.asarray(truth[key]).shape[1]
        keys += [k for k in sorted(truth) if k != key and _is_shard_block(k)
                 and np.asarray(truth[k]).ndim == 2 and np.asarray(truth[k]).shape[1] == width]
    records = np.vstack([np.asarray(truth[k], dtype=np.float64) for k in keys])
    label_keys = [_labels_key(k) for k in keys]
    labels = (np.concatenate([np.asarray(truth[k]) for k in label_keys])
              if all(k in truth for k in label_keys) else None)
    return records, labels


def _auxiliary_pool(key: str, truth: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray | None]:
    """The victim's records, then the held-out records in the victim's columns."""
    victim = np.asarray(truth[key], dtype=np.float64)
    if auxiliary_key("X") not in truth:
        raise ValidationError(
            f"{OWNER}: pool=auxiliary matches rows against the run's held-out records "
            f"({auxiliary_key('X')!r}), which this ground truth lacks (a run of an older fedsec, "
            "or a store built by hand); run the protocol again, or use pool=victim or "
            "pool=federation.")
    held = np.asarray(truth[auxiliary_key("X")], dtype=np.float64)
    parsed = parse_truth_key(key)
    columns_key = truth_key(parsed.party, *parsed.path[:-1], "columns")
    if columns_key in truth:
        held = held[:, np.asarray(truth[columns_key], dtype=np.int64)]
    if held.ndim != 2 or held.shape[1] != victim.shape[1]:
        raise ValidationError(
            f"{OWNER}: the held-out records have {held.shape[-1]} columns where {key!r} has "
            f"{victim.shape[1]} and no 'columns' entry says which to take; use pool=victim or "
            "pool=federation.")
    labels_key = _labels_key(key)
    labels = None
    if labels_key in truth and auxiliary_key("y") in truth:
        labels = np.concatenate([np.asarray(truth[labels_key]),
                                 np.asarray(truth[auxiliary_key("y")])])
    return np.vstack([victim, held]), labels


def _labels_key(key: str) -> str:
    """The labels beside a feature block (``.../X`` → ``.../y``)."""
    parsed = parse_truth_key(key)
    return truth_key(parsed.party, *parsed.path[:-1], "y")


def _is_shard_block(key: str) -> bool:
    path = parse_truth_key(key).path
    return len(path) == 3 and path[0] == "shard" and path[2] == "X"


def link(estimate: np.ndarray, records: np.ndarray, rule: str) -> np.ndarray:
    """The record each estimated row is linked to: its nearest, or its optimal match.

    Examples
    --------
    >>> link(np.array([[0.1], [0.2]]), np.array([[0.0], [1.0]]), "nearest").tolist()
    [0, 0]
    >>> link(np.array([[0.1], [0.2]]), np.array([[0.0], [1.0]]), "assignment").tolist()
    [0, 1]
    """
    if rule == "assignment":
        return match_rows(estimate, records)
    return np.argmin(cdist(estimate, records, "sqeuclidean"), axis=1)


PROJECTIONS = 10
"""Random projections averaged into the projection baseline."""


def projection_reidentified(victim: np.ndarray, source: np.ndarray, rank: int,
                            records: np.ndarray, rule: str,
                            rng: np.random.Generator) -> float:
    """The re-identification random orthogonal projections of the victim's true rows, of the
    estimate's rank and in the estimate's row order, reach by the same rule and pool (the
    mean over :data:`PROJECTIONS` draws): what the metric gives for an uninformative
    projection. (Full rank: the rows themselves.)"""
    d = victim.shape[1]
    rank = max(1, min(rank, d))
    rates = []
    for _ in range(PROJECTIONS):
        basis, _ = np.linalg.qr(rng.normal(size=(d, rank)))
        projected = victim[source] @ basis @ basis.T
        rates.append(float((link(projected, records, rule) == source).mean()))
    return float(np.mean(rates))


def source_rows(key: str, truth: Mapping[str, Any]) -> np.ndarray | None:
    """The record behind each row a party shared (its ``value/shared_rows``), if known."""
    parsed = parse_truth_key(key)
    source = truth.get(truth_key(parsed.party, "value", SOURCE_ROWS))
    return None if source is None else np.asarray(source, dtype=np.int64)


def _row_metrics(estimate: np.ndarray, truth: np.ndarray, source: np.ndarray | None,
                 eps: float) -> dict[str, float]:
    """Errors of each row against its own record (or, without the permutation, after
    optimal pairing with the victim's records)."""
    pairing, errors = matched_errors(estimate, truth, source)
    matched = truth[pairing]
    norm = float(np.linalg.norm(matched))
    return {"set_error": float(np.linalg.norm(estimate - matched)) / norm if norm > 0 else 0.0,
            "point_error": float(errors.mean()) if errors.size else float("nan"),
            "fraction_recovered": float((errors <= eps).sum() / len(truth))}


@register("scorer", "matched-rows")
class MatchedRows(Scorer):
    """Permuted rows: error after optimal matching, re-identification in a stated pool by a stated
    rule, against a random projection and chance.

    Permuted rows: errors after optimal matching, re-identification in a stated pool.

    Per target: ``set_error`` (relative Frobenius error of the rows matched to the victim's
    records by the auditor's optimal assignment), ``point_error`` (mean Euclidean error per
    row), ``fraction_recovered`` (records within ``epsilon`` of their match); then, by the
    ``rule`` in the ``pool`` (parameters), ``reidentified`` (rows linked to the record they
    came from; needs the worker's ``value/shared_rows`` in the truth) and ``label_accuracy``
    (estimated labels against the linked record's). Beside them: ``projection_reidentified``,
    what a random orthogonal projection of the true rows of the estimate's rank reaches by
    the same rule (optimal assignment gives every row of any exact projection back, so only
    a rate above this one is the attack's), and ``chance_reidentified``, a random guess. Each
    metric also comes with the attack's baseline estimate's.
    """

    paper = PAPER

    Params = RowsParams
    recovers = "{what} (rows in an unknown order)"
    reads = frozenset({"rows", "unordered-rows"})
    glossary: ClassVar[Mapping[str, str]] = {
        "set_error": (
            "the relative error of the estimated rows matched to the victim's records."),
        "point_error": (
            "each matched row's Euclidean error, averaged."),
        "fraction_recovered": (
            "the fraction of true records within epsilon of their match."),
        "reidentified": (
            "the fraction of rows linked to the record they came from (the scorer's rule: "
            "nearest record, or optimal assignment; its pool: the victim's records, the "
            "federation's, or the victim's mixed with held-out records)."),
        "projection_reidentified": (
            "the same for a random orthogonal projection of the true rows of the estimate's "
            "rank: what the metric gives for an uninformative projection."),
        "chance_reidentified": "1 / the pool's size: a random guess.",
        "pool_size": "the number of candidate records a row is linked among (the pool's size).",
        "label_accuracy": (
            "the fraction of estimated labels equal to the linked record's label."),
        "advantage": advantage_meaning("set error"),
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        p = self.params
        rng = np.random.default_rng(p.seed)
        per_target: dict[str, dict[str, float]] = {}
        sizes = []
        for key in feature_targets(reconstruction, truth):
            target = np.asarray(truth[key], dtype=np.float64)
            source = source_rows(key, truth)
            records, labels = record_pool(key, truth, p.pool)
            sizes.append(len(records))
            labels_key = _labels_key(key)
            entry: dict[str, float] = {}
            for prefix, table in (("", reconstruction.estimates),
                                  ("baseline_", reconstruction.baseline)):
                if key not in table:
                    continue
                estimate = np.asarray(table[key], dtype=np.float64)
                metrics = _row_metrics(estimate, target, source, p.epsilon)
                linked = link(estimate, records, p.rule)
                metrics["reidentified"] = (float((linked == source).mean())
                                           if source is not None
                                           and source.shape == linked.shape else float("nan"))
                if labels_key in table and labels is not None:
                    metrics["label_accuracy"] = float(
                        (np.asarray(table[labels_key]) == labels[linked]).mean())
                if not prefix and source is not None and source.shape == linked.shape:
                    metrics["projection_reidentified"] = projection_reidentified(
                        target, source, int(np.linalg.matrix_rank(estimate)), records,
                        p.rule, rng)
                    metrics["chance_reidentified"] = 1.0 / len(records)
                entry.update({prefix + k: v for k, v in metrics.items()})
            per_target[key] = entry
        summary: dict[str, Any] = {"n_targets": len(per_target), "epsilon": p.epsilon,
                                   "pool_size": float(np.mean(sizes)) if sizes else 0.0}
        summary.update(mean_over_targets(per_target, ("set_error", "point_error",
                                                      "fraction_recovered", "reidentified",
                                                      "label_accuracy")))
        summary.update(mean_over_targets(per_target, ("projection_reidentified",
                                                      "chance_reidentified")))
        for name in ("baseline_projection_reidentified", "baseline_chance_reidentified"):
            summary.pop(name, None)
        summary["advantage"] = advantage(summary["set_error"], summary["baseline_set_error"])
        summary["per_target"] = per_target
        return summary
