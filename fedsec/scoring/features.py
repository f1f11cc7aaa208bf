"""The ``feature-recovery`` scorer: recovered feature blocks, per feature and per sample.

For attacks that return a party's features in the shard's own row order (FDSKL's
``linear-inference``): no alignment, no matching.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.scoring.reconstruction import (
    EpsilonParams,
    advantage_meaning,
    per_target,
    target_summary,
)

PAPER = ("Gu, Dang, Li, Huang, Federated Doubly Stochastic Kernel Learning for Vertically "
         "Partitioned Data (Definition 6, Lemma 8)")


def _recovery(estimate: np.ndarray, truth: np.ndarray, eps: float) -> dict[str, float]:
    gap = estimate - truth
    norm = max(float(np.linalg.norm(truth)), 1e-300)
    columns = np.linalg.norm(gap, axis=0) / np.maximum(np.linalg.norm(truth, axis=0), 1e-300)
    rows = np.linalg.norm(gap, axis=1) / np.maximum(np.linalg.norm(truth, axis=1), 1e-300)
    return {"relative_error": float(np.linalg.norm(gap)) / norm,
            "feature_error_mean": float(columns.mean()), "feature_error_max": float(columns.max()),
            "sample_error_mean": float(rows.mean()), "sample_error_median": float(np.median(rows)),
            "fraction_recovered": float((rows <= eps).mean())}


@register("scorer", "feature-recovery")
class FeatureRecovery(Scorer):
    """Relative error per feature and per sample, fraction of samples recovered within epsilon, each
    against the baseline.

    Per-feature and per-sample relative errors of recovered feature blocks.

    Per target (a worker's ``n x d_l`` block): the overall relative error, the
    relative error of each feature (column: mean and worst), of each sample
    (row: mean and median) and the fraction of samples whose relative error is
    at most ``epsilon``; each next to the naive baseline's. No alignment: an
    estimate off by a translation is scored as such.
    """

    paper = PAPER

    Params = EpsilonParams
    reads = frozenset({"values", "rows"})
    glossary: ClassVar[Mapping[str, str]] = {
        "relative_error": (
            "||estimate - truth|| / ||truth|| of a recovered feature block."),
        "feature_error_mean": (
            "the relative error of each feature (column), averaged."),
        "sample_error_mean": (
            "the relative error of each sample (row), averaged."),
        "fraction_recovered": (
            "the fraction of samples recovered within relative error epsilon."),
        "advantage": advantage_meaning("relative error"),
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        eps = self.params.epsilon
        targets = per_target(reconstruction, truth, lambda e, t: _recovery(
            np.atleast_2d(e), np.atleast_2d(t), eps))
        return target_summary(targets, ("relative_error", "feature_error_mean",
                                        "sample_error_mean", "fraction_recovered"),
                              advantage_of="relative_error", epsilon=eps)
