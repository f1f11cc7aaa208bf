"""epsilon-DR privacy, checked against an actual reconstruction.

Nguyen et al., "AutoGAN-based dimension reduction for privacy preservation",
Neurocomputing 384 (2020), Definition 1, as adapted to data collaboration by
Imakura et al. (arXiv:2101.11144) and reviewed in Nosaka and Yoshise
(arXiv:2403.02780), Definition 2.6: a dimension reduction is epsilon-DR
private on a sample set when every sample's reconstruction error is at least
epsilon. The worker checks it with its own map before sharing (see
:mod:`fedsec.protocols.nri_dc.maths`); the ``epsilon-dr`` scorer checks it after the
fact, on what an attack actually rebuilt, and writes the same certificate:
pass or fail, the margin (smallest error minus epsilon) and the fraction of
samples that violate it.

Shared rows are permuted: each estimated row is compared with the record it came
from (the truth's permutation), or, where the truth holds none, with a distinct
true row by optimal pairing (:mod:`fedsec.scoring.rows`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.scoring.reconstruction import EpsilonParams
from fedsec.scoring.rows import feature_targets, matched_errors, source_rows

PAPER = ("Nguyen et al., AutoGAN-based dimension reduction for privacy preservation, "
         "Neurocomputing 384 (2020); Imakura et al., arXiv:2101.11144")


def dr_certificate(errors: np.ndarray, epsilon: float) -> dict[str, Any]:
    """epsilon-DR verdict on per-sample errors: pass when every error is at least ``epsilon``.

    ``margin`` is the smallest error minus ``epsilon`` (negative when it fails).

    Examples
    --------
    >>> c = dr_certificate(np.array([0.5, 0.2]), 0.3)
    >>> c["passed"], c["n_violating"], round(c["margin"], 3)
    (False, 1, -0.1)
    """
    errors = np.asarray(errors, dtype=np.float64)
    violating = errors < epsilon
    smallest = float(errors.min()) if errors.size else float("inf")
    return {"epsilon": float(epsilon), "n_samples": int(errors.size),
            "n_violating": int(violating.sum()),
            "fraction_violating": float(violating.mean()) if errors.size else 0.0,
            "min_error": smallest, "margin": smallest - float(epsilon),
            "passed": bool(not violating.any())}


@register("scorer", "epsilon-dr")
class EpsilonDR(Scorer):
    """epsilon-DR check on a reconstruction: rows matched to the truth, per-sample error against
    epsilon, fraction violating, pass/fail with margin.

    epsilon-DR certificate of what an attack rebuilt: per-sample error against epsilon.
    """

    paper = PAPER

    @dataclass(frozen=True, kw_only=True)
    class Params(EpsilonParams):
        epsilon: float = 0.1
        """epsilon-DR threshold: a sample violates it when its Euclidean error from its true record
        is below epsilon (feature units)."""
    reads = frozenset({"rows", "unordered-rows"})
    glossary: ClassVar[Mapping[str, str]] = {
        "passed": (
            "whether every sample's reconstruction error exceeds epsilon (the certificate)."),
        "margin": (
            "the smallest per-sample error minus epsilon (negative: violated)."),
        "min_error": (
            "the smallest per-sample reconstruction error."),
        "fraction_violating": (
            "the fraction of samples reconstructed within epsilon."),
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        eps = self.params.epsilon
        per_target: dict[str, dict[str, Any]] = {}
        all_errors: list[np.ndarray] = []
        for key in feature_targets(reconstruction, truth):
            target = np.asarray(truth[key], dtype=np.float64)
            source = source_rows(key, truth)
            _, errors = matched_errors(np.asarray(reconstruction.estimates[key]), target,
                                       source)
            all_errors.append(errors)
            entry = dr_certificate(errors, eps)
            baseline = reconstruction.baseline.get(key)
            if baseline is not None:
                _, base_errors = matched_errors(np.asarray(baseline), target, source)
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
