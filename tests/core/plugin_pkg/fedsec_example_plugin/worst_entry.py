"""The worst entry of a recovered value: the largest error, relative to the largest entry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.scoring.reconstruction import advantage, check_truth


def worst_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """``max |estimate - truth| / max |truth|`` (the absolute error when the truth is 0).

    Examples
    --------
    >>> worst_error(np.array([1.0, 2.5]), np.array([1.0, 2.0]))
    0.25
    """
    gap = float(np.max(np.abs(np.asarray(estimate, dtype=float) - truth), initial=0.0))
    scale = float(np.max(np.abs(truth), initial=0.0))
    return gap / scale if scale > 0 else gap


class WorstEntry(Scorer):
    """The largest error over each target's entries, against the baseline's."""

    summary = "Largest error over a target's entries, relative to its largest entry."
    reads = frozenset({"values"})
    glossary: ClassVar[Mapping[str, str]] = {
        "worst_error": "max |estimate - truth| / max |truth|, averaged over the targets.",
        "advantage": "1 - worst error / the baseline's (1: exact, 0: the baseline).",
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        keys = sorted(reconstruction.estimates)
        check_truth(keys, truth)
        errors, base = [], []
        for key in keys:
            target = np.asarray(truth[key], dtype=float)
            errors.append(worst_error(reconstruction.estimates[key], target))
            if key in reconstruction.baseline:
                base.append(worst_error(reconstruction.baseline[key], target))
        error = float(np.mean(errors)) if errors else float("nan")
        baseline = float(np.mean(base)) if base else float("nan")
        return {"n_targets": len(keys), "worst_error": error, "baseline_worst_error": baseline,
                "advantage": advantage(error, baseline)}
