"""Scoring permuted rows: pair each estimated row with a true record, then measure.

Shared rows of data collaboration (NRI-DC) arrive permuted, so the
``matched-rows`` scorer (and ``epsilon-dr``) first pair each estimated row with
a distinct true row by optimal assignment (Hungarian method,
:func:`scipy.optimize.linear_sum_assignment`, on squared distances). That
pairing uses the ground truth: it is the auditor's step (the best an adversary
holding the true records could do), never the attack's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.private_store import parse_truth_key, truth_key
from fedsec.registry import register
from fedsec.scoring.reconstruction import (
    EpsilonParams,
    advantage,
    check_truth,
    mean_over_targets,
)

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


def matched_errors(estimate: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairing of :func:`match_rows` and each estimated row's Euclidean error under it."""
    pairing = match_rows(estimate, truth)
    errors = np.linalg.norm(np.asarray(estimate, dtype=np.float64) - truth[pairing], axis=1)
    return pairing, errors


def feature_targets(reconstruction: Reconstruction,
                    truth: Mapping[str, np.ndarray | bytes]) -> list[str]:
    """The estimated feature blocks (``.../X``), each checked against the ground truth."""
    keys = [k for k in reconstruction.estimates if k.endswith("/X")]
    check_truth(keys, truth)
    return keys


def _row_metrics(estimate: np.ndarray, truth: np.ndarray, source: np.ndarray | None,
                 eps: float) -> tuple[dict[str, float], np.ndarray]:
    pairing, errors = matched_errors(estimate, truth)
    matched = truth[pairing]
    norm = float(np.linalg.norm(matched))
    out = {"set_error": float(np.linalg.norm(estimate - matched)) / norm if norm > 0 else 0.0,
           "point_error": float(errors.mean()) if errors.size else float("nan"),
           "fraction_recovered": float((errors <= eps).sum() / len(truth)),
           "reidentified": float("nan"), "linked": float("nan")}
    if source is not None and source.shape == pairing.shape:
        nearest = np.argmin(cdist(estimate, truth, "sqeuclidean"), axis=1)
        out["reidentified"] = float((pairing == source).mean())
        out["linked"] = float((nearest == source).mean())
    return out, pairing


@register("scorer", "matched-rows")
class MatchedRows(Scorer):
    """Permuted rows scored after optimal matching to the true records.

    Per target: ``set_error`` (relative Frobenius error of the matched rows),
    ``point_error`` (mean Euclidean error per row), ``fraction_recovered``
    (true records within ``epsilon`` of their match), ``reidentified`` (rows
    whose match is the record they came from; needs the worker's
    ``value/shared_rows`` in the truth), ``linked`` (the same with each row's
    nearest record, matches need not be distinct) and ``label_accuracy``
    (labels estimated for a row against the matched record's label). Each
    next to its baseline; for a constant baseline the matching is arbitrary,
    so its re-identification is at chance level.
    """

    summary = ("Rows matched to the true records (Hungarian): set error, per-row error, "
               "re-identification and linked-label accuracy, against the baseline.")
    paper = PAPER

    Params = EpsilonParams
    glossary: ClassVar[Mapping[str, str]] = {
        "set_error": (
            "the relative error of the estimated rows matched to the true records."),
        "point_error": (
            "each matched row's Euclidean error, averaged."),
        "fraction_recovered": (
            "the fraction of true records within epsilon of their match."),
        "reidentified": (
            "the fraction of rows whose match is the record they came from."),
        "linked": (
            "the same with each row's nearest record (matches need not be distinct)."),
        "label_accuracy": (
            "the fraction of estimated labels equal to the matched record's label."),
        "advantage": (
            "1 - set error / the baseline's (1: exact, 0: the baseline)."),
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        eps = self.params.epsilon
        per_target: dict[str, dict[str, float]] = {}
        for key in feature_targets(reconstruction, truth):
            target = np.asarray(truth[key], dtype=np.float64)
            parsed = parse_truth_key(key)
            source = truth.get(truth_key(parsed.party, "value", SOURCE_ROWS))
            source = None if source is None else np.asarray(source, dtype=np.int64)
            labels_key = truth_key(parsed.party, *parsed.path[:-1], "y")
            entry: dict[str, float] = {}
            for prefix, table in (("", reconstruction.estimates),
                                  ("baseline_", reconstruction.baseline)):
                if key not in table:
                    continue
                metrics, pairing = _row_metrics(np.asarray(table[key], dtype=np.float64),
                                                target, source, eps)
                if labels_key in table and labels_key in truth:
                    true_labels = np.asarray(truth[labels_key])[pairing]
                    metrics["label_accuracy"] = float(
                        (np.asarray(table[labels_key]) == true_labels).mean())
                entry.update({prefix + k: v for k, v in metrics.items()})
            per_target[key] = entry
        summary: dict[str, Any] = {"n_targets": len(per_target), "epsilon": eps}
        summary.update(mean_over_targets(per_target, ("set_error", "point_error",
                                                      "fraction_recovered", "reidentified",
                                                      "linked", "label_accuracy")))
        summary["advantage"] = advantage(summary["set_error"], summary["baseline_set_error"])
        summary["per_target"] = per_target
        return summary
