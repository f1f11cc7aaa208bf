"""epsilon-DR privacy, checked against an actual reconstruction; and matching permuted rows.

Nguyen et al., "AutoGAN-based dimension reduction for privacy preservation",
Neurocomputing 384 (2020), Definition 1, as adapted to data collaboration by
Imakura et al. (arXiv:2101.11144) and reviewed in Nosaka and Yoshise
(arXiv:2403.02780), Definition 2.6: a dimension reduction is epsilon-DR
private on a sample set when every sample's reconstruction error is at least
epsilon. The worker checks it with its own map before sharing (see
:mod:`protocols.nri_dc_maths`); the ``epsilon-dr`` scorer checks it after the
fact, on what an attack actually rebuilt, and writes the same certificate:
pass or fail, the margin (smallest error minus epsilon) and the fraction of
samples that violate it.

Shared rows are permuted, so both this scorer and ``matched-rows`` first
pair each estimated row with a distinct true row by optimal assignment
(Hungarian method, :func:`scipy.optimize.linear_sum_assignment`, on squared
distances). That pairing uses the ground truth: it is the auditor's step
(the best an adversary holding the true records could do), never the attack's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.scoring import check_truth
from fedsec.validation import check_float
from protocols.nri_dc_maths import dr_certificate

PAPER = ("Nguyen et al., AutoGAN-based dimension reduction for privacy preservation, "
         "Neurocomputing 384 (2020); Imakura et al., arXiv:2101.11144")


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


@register("scorer", "epsilon-dr")
class EpsilonDR(Scorer):
    """epsilon-DR certificate of what an attack rebuilt: per-sample error against epsilon."""

    summary = ("epsilon-DR check on a reconstruction: rows matched to the truth, per-sample "
               "error against epsilon, fraction violating, pass/fail with margin.")
    paper = PAPER

    @dataclass(frozen=True, kw_only=True)
    class Params:
        epsilon: float = 0.1

        def __post_init__(self) -> None:
            check_float(self.epsilon, owner="scorer 'epsilon-dr'", name="epsilon",
                        min_value=0.0)

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        eps = self.params.epsilon
        per_target: dict[str, dict[str, Any]] = {}
        all_errors: list[np.ndarray] = []
        for key in feature_targets(reconstruction, truth):
            target = np.asarray(truth[key], dtype=np.float64)
            _, errors = matched_errors(np.asarray(reconstruction.estimates[key]), target)
            all_errors.append(errors)
            entry = dr_certificate(errors, eps)
            baseline = reconstruction.baseline.get(key)
            if baseline is not None:
                _, base_errors = matched_errors(np.asarray(baseline), target)
                entry["baseline_fraction_violating"] = dr_certificate(
                    base_errors, eps)["fraction_violating"]
            per_target[key] = entry
        errors = np.concatenate(all_errors) if all_errors else np.empty(0)
        overall = dr_certificate(errors, eps)
        base = [e["baseline_fraction_violating"] for e in per_target.values()
                if "baseline_fraction_violating" in e]
        return {
            "n_targets": len(per_target), "epsilon": eps, "passed": overall["passed"],
            "margin": overall["margin"], "min_error": overall["min_error"],
            "fraction_violating": overall["fraction_violating"],
            "baseline_fraction_violating": float(np.mean(base)) if base else float("nan"),
            "per_target": per_target,
        }
