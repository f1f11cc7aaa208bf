"""Scoring recovered data points: distances, aligned positions, fraction recovered.

A reconstruction of a party's feature block may be exact, or exact up to a
rigid motion (when the attacker works in a frame of its own, as classical MDS
gives): the hidden-distance error is invariant to that, and positions are
compared after the best rotation and translation (orthogonal Procrustes,
Schönemann 1966), which is the auditor's step, never the attacker's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from scipy.linalg import orthogonal_procrustes

from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.scoring.reconstruction import (
    EpsilonParams,
    advantage_meaning,
    per_target,
    target_summary,
)


def distance_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """``||D(estimate) - D(truth)||_F / ||D(truth)||_F`` over squared pairwise distances."""
    def sq(X: np.ndarray) -> np.ndarray:
        g = (X**2).sum(axis=1)
        return np.maximum(g[:, None] + g[None, :] - 2 * X @ X.T, 0.0)

    dt = sq(truth)
    norm = float(np.linalg.norm(dt))
    return float(np.linalg.norm(sq(estimate) - dt)) / norm if norm > 0 else 0.0


def aligned(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """``estimate`` moved by the rotation/reflection and translation that best fit ``truth``."""
    mu_e, mu_t = estimate.mean(axis=0), truth.mean(axis=0)
    rotation, _ = orthogonal_procrustes(estimate - mu_e, truth - mu_t)
    return (estimate - mu_e) @ rotation + mu_t


def point_errors(estimate: np.ndarray, truth: np.ndarray, *, align: bool) -> np.ndarray:
    """Euclidean error of each point (after alignment when ``align``)."""
    moved = aligned(estimate, truth) if align else estimate
    return np.linalg.norm(moved - truth, axis=1)


@register("scorer", "point-recovery")
class PointRecovery(Scorer):
    """Relative error on the hidden distances, per-point error after Procrustes alignment, fraction
    of points within epsilon, each against the baseline.

    Hidden-distance error, per-point error after alignment, fraction within epsilon.

    Rows an attack could not estimate are NaN and count as not recovered.
    """

    Params = EpsilonParams
    recovers = "{what} (up to a rigid motion)"
    reads = frozenset({"rows"})
    glossary: ClassVar[Mapping[str, str]] = {
        "distance_error": (
            "the relative error on the hidden squared-distance block."),
        "point_error": (
            "each point's error after Procrustes alignment, averaged."),
        "fraction_recovered": (
            "the fraction of points recovered within epsilon after alignment."),
        "fraction_estimated": (
            "the fraction of points the attack could estimate at all."),
        "advantage": advantage_meaning("point error"),
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        eps = self.params.epsilon
        targets = per_target(reconstruction, truth, lambda e, t: self._metrics(e, t, eps))
        return target_summary(targets, ("distance_error", "point_error", "fraction_recovered"),
                              advantage_of="point_error", epsilon=eps)

    @staticmethod
    def _metrics(estimate: np.ndarray, truth: np.ndarray, eps: float) -> dict[str, float]:
        if estimate.shape != truth.shape:
            raise ValidationError(
                f"An estimate of shape {estimate.shape} cannot be scored against {truth.shape}."
            )
        found = np.all(np.isfinite(estimate), axis=1)
        if found.sum() < 2:
            return {"distance_error": 1.0, "point_error": float("nan"),
                    "fraction_recovered": 0.0, "fraction_estimated": float(found.mean())}
        errors = point_errors(estimate[found], truth[found], align=True)
        return {"distance_error": distance_error(estimate[found], truth[found]),
                "point_error": float(errors.mean()),
                "fraction_recovered": float((errors <= eps).sum() / len(truth)),
                "fraction_estimated": float(found.mean())}
