"""The ``pixel-recovery`` scorer: reconstructed inputs (images) row by row.

For attacks that return a party's inputs in its own row order (FedGraph's embedding
inversion), possibly only the first ``n`` rows: those are compared with the first ``n`` true
rows. Per target: the pixel mean squared error, the PSNR (peak-to-peak range ``data_range``:
2 for pixels in [-1, 1]), and the share of rows re-identified (the true row nearest to the
reconstruction, among all of the target's rows, is its own), each next to the baseline's.
A random guess re-identifies about ``1 / n`` of the rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.scoring.reconstruction import mean_over_targets, per_target
from fedsec.validation import check_float


def psnr(mse: float, data_range: float) -> float:
    """Peak signal-to-noise ratio in dB (infinite for an exact reconstruction).

    Examples
    --------
    >>> round(psnr(0.04, 2.0), 2)
    20.0
    """
    return float("inf") if mse <= 0 else float(10 * np.log10(data_range ** 2 / mse))


def reidentified(estimate: np.ndarray, truth: np.ndarray) -> float:
    """The share of rows whose nearest true row (Euclidean, among all of ``truth``) is their
    own (row ``i`` of ``estimate`` against row ``i`` of ``truth``).

    Examples
    --------
    >>> reidentified(np.array([[0.0], [1.1]]), np.array([[0.0], [1.0], [3.0]]))
    1.0
    """
    n = len(estimate)
    d2 = ((estimate[:, None, :] - truth[None, :, :]) ** 2).sum(axis=2)
    return float(np.mean(np.argmin(d2, axis=1) == np.arange(n)))


def _metrics(estimate: np.ndarray, truth: np.ndarray, data_range: float) -> dict[str, float]:
    estimate = np.atleast_2d(estimate)
    truth = np.atleast_2d(truth)
    if estimate.shape[1:] != truth.shape[1:] or len(estimate) > len(truth):
        raise ValidationError(f"A reconstruction of shape {estimate.shape} does not fit inputs "
                              f"of shape {truth.shape}.")
    mse = float(np.mean((estimate - truth[:len(estimate)]) ** 2))
    return {"mse": mse, "psnr": psnr(mse, data_range),
            "reidentified": reidentified(estimate, truth)}


@register("scorer", "pixel-recovery")
class PixelRecovery(Scorer):
    """Pixel MSE, PSNR and the share of rows re-identified, each against the baseline."""

    summary = ("Reconstructed inputs: pixel MSE, PSNR and the share of rows re-identified "
               "(nearest true row), against the baseline.")

    @dataclass(frozen=True, kw_only=True)
    class Params:
        data_range: float = 2.0
        """Peak-to-peak range of the pixel values in the PSNR, 10 log10(range^2 / mse) (2 for pixels
        in [-1, 1])."""

        def __post_init__(self) -> None:
            check_float(self.data_range, owner="scorer 'pixel-recovery'", name="data_range",
                        min_value=0.0, min_inclusive=False)

    reads = frozenset({"rows"})
    glossary: ClassVar[Mapping[str, str]] = {
        "mse": "the mean squared error per pixel of the reconstructed inputs.",
        "psnr": "10 log10(range² / mse), in dB: higher is a closer reconstruction.",
        "reidentified": ("the share of reconstructed rows whose nearest true row (among all "
                         "of the target's rows) is their own."),
        "chance_reidentified": "1 / the number of rows: what a random guess re-identifies.",
        "advantage": "1 - mse / the baseline's mse (1: exact, 0: the baseline).",
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        targets = per_target(reconstruction, truth, lambda e, t: _metrics(
            e, t, self.params.data_range))
        for key, entry in targets.items():
            entry["chance_reidentified"] = 1.0 / max(1, len(np.atleast_2d(truth[key])))
        summary: dict[str, Any] = {"n_targets": len(targets)}
        summary.update(mean_over_targets(targets, ("mse", "psnr", "reidentified",
                                                   "chance_reidentified")))
        summary.pop("baseline_chance_reidentified", None)
        base = summary["baseline_mse"]
        summary["advantage"] = (1.0 - summary["mse"] / base) if base > 0 else float("nan")
        summary["per_target"] = targets
        return summary
