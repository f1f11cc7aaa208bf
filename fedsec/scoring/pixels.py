"""The ``pixel-recovery`` scorer: reconstructed inputs (images) row by row.

For attacks that return a party's inputs in its own row order (FedGraph's embedding
inversion), possibly only the first ``n`` rows: those are compared with the first ``n`` true
rows. Per target: the pixel mean squared error, the PSNR (peak-to-peak range ``data_range``:
2 for pixels in [-1, 1]), the mean SSIM of the rows as images (:func:`ssim`, Wang, Bovik,
Sheikh, Simoncelli 2004, with scikit-image's defaults; for rows that are square images, or of
the declared ``image_shape``), and the share of rows re-identified (the true row nearest to
the reconstruction, among all of the target's rows, is its own), each next to the baseline's.
A random guess re-identifies about ``1 / n`` of the rows. LPIPS is not reported: no
well-kept package ships its network weights for use offline.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import numpy as np

from fedsec.declare import Declared, Float, owner_of
from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.scoring.reconstruction import mean_over_targets, per_target


def psnr(mse: float, data_range: float) -> float:
    """Peak signal-to-noise ratio in dB (infinite for an exact reconstruction).

    Examples
    --------
    >>> round(psnr(0.04, 2.0), 2)
    20.0
    """
    return float("inf") if mse <= 0 else float(10 * np.log10(data_range ** 2 / mse))


#: SSIM's window side and constants (Wang et al. 2004; scikit-image's defaults).
SSIM_WINDOW, SSIM_K1, SSIM_K2 = 7, 0.01, 0.03


def ssim(estimate: np.ndarray, truth: np.ndarray, data_range: float) -> np.ndarray:
    """The structural similarity of each image of ``estimate`` with the same image of
    ``truth`` (arrays ``(n, height, width)``): the mean over every 7 x 7 window inside the
    image of the SSIM index, with sample (co)variances, as
    ``skimage.metrics.structural_similarity`` computes it by default.

    Examples
    --------
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(2, 9, 9))
    >>> ssim(x, x, 2.0).round(6).tolist()
    [1.0, 1.0]
    """
    windows = [np.lib.stride_tricks.sliding_window_view(np.asarray(a, dtype=np.float64),
                                                        (SSIM_WINDOW, SSIM_WINDOW),
                                                        axis=(1, 2))
               for a in (estimate, truth)]
    x, y = windows
    axes = (-2, -1)
    mx, my = x.mean(axis=axes), y.mean(axis=axes)
    correction = SSIM_WINDOW ** 2 / (SSIM_WINDOW ** 2 - 1)
    vx = correction * ((x * x).mean(axis=axes) - mx * mx)
    vy = correction * ((y * y).mean(axis=axes) - my * my)
    vxy = correction * ((x * y).mean(axis=axes) - mx * my)
    c1, c2 = (SSIM_K1 * data_range) ** 2, (SSIM_K2 * data_range) ** 2
    index = ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx ** 2 + my ** 2 + c1) * (vx + vy + c2))
    return np.asarray(index.mean(axis=(1, 2)), dtype=np.float64)


def image_shape_of(width: int, declared: str) -> tuple[int, int] | None:
    """The (height, width) of images flattened to rows of ``width`` values: ``declared``
    (``"28x28"``), or a square when ``declared`` is ``"auto"``; None when neither fits or
    the images are smaller than SSIM's window.

    Examples
    --------
    >>> image_shape_of(784, "auto"), image_shape_of(10, "auto"), image_shape_of(12, "3x4")
    ((28, 28), None, None)
    """
    if declared == "auto":
        side = math.isqrt(width)
        shape = (side, side)
    else:
        height, _, cols = declared.partition("x")
        shape = (int(height), int(cols))
    if shape[0] * shape[1] != width or min(shape) < SSIM_WINDOW:
        return None
    return shape


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


def _metrics(estimate: np.ndarray, truth: np.ndarray, data_range: float,
             image_shape: str) -> dict[str, float]:
    estimate = np.atleast_2d(estimate)
    truth = np.atleast_2d(truth)
    if estimate.shape[1:] != truth.shape[1:] or len(estimate) > len(truth):
        raise ValidationError(f"A reconstruction of shape {estimate.shape} does not fit inputs "
                              f"of shape {truth.shape}.")
    mse = float(np.mean((estimate - truth[:len(estimate)]) ** 2))
    out = {"mse": mse, "psnr": psnr(mse, data_range),
           "reidentified": reidentified(estimate, truth)}
    shape = image_shape_of(estimate.shape[1], image_shape) if estimate.ndim == 2 else None
    if shape is not None:
        images = (len(estimate), *shape)
        out["ssim"] = float(np.mean(ssim(estimate.reshape(images),
                                         truth[:len(estimate)].reshape(images), data_range)))
    return out


@register("scorer", "pixel-recovery")
class PixelRecovery(Scorer):
    """Reconstructed inputs: pixel MSE, PSNR, SSIM and the share of rows re-identified (nearest true
    row), against the baseline.

    Pixel MSE, PSNR, SSIM and the share of rows re-identified, each against the
    baseline.
    """

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        data_range: Annotated[float, Float(min=0.0, min_inclusive=False)] = 2.0
        """Peak-to-peak range of the pixel values in the PSNR, 10 log10(range^2 / mse) (2 for pixels
        in [-1, 1])."""

        image_shape: str = "auto"
        """The rows' image shape for SSIM, ``HEIGHTxWIDTH`` (``28x28``); ``auto``: square
        images when the row length is a square. Rows of another shape get no SSIM."""

        def __post_init__(self) -> None:
            if self.image_shape != "auto" and not re.fullmatch(r"[1-9]\d*x[1-9]\d*",
                                                               self.image_shape):
                raise ValidationError(
                    f"The 'image_shape' parameter of {owner_of(self)} must be 'auto' or "
                    f"HEIGHTxWIDTH, such as 28x28; got {self.image_shape!r}.")

    reads = frozenset({"rows"})
    glossary: ClassVar[Mapping[str, str]] = {
        "mse": "the mean squared error per pixel of the reconstructed inputs.",
        "psnr": "10 log10(range² / mse), in dB: higher is a closer reconstruction.",
        "ssim": ("the structural similarity of the reconstructed images with the true ones "
                 "(Wang et al. 2004; 1: identical), mean over rows."),
        "reidentified": ("the share of reconstructed rows whose nearest true row (among all "
                         "of the target's rows) is their own."),
        "chance_reidentified": "1 / the number of rows: what a random guess re-identifies.",
        "advantage": "1 - mse / the baseline's mse (1: exact, 0: the baseline).",
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        targets = per_target(reconstruction, truth, lambda e, t: _metrics(
            e, t, self.params.data_range, self.params.image_shape))
        for key, entry in targets.items():
            entry["chance_reidentified"] = 1.0 / max(1, len(np.atleast_2d(truth[key])))
        summary: dict[str, Any] = {"n_targets": len(targets)}
        metrics = ("mse", "psnr", "ssim", "reidentified", "chance_reidentified")
        summary.update(mean_over_targets(targets, tuple(
            m for m in metrics if any(m in entry for entry in targets.values()))))
        summary.pop("baseline_chance_reidentified", None)
        base = summary["baseline_mse"]
        summary["advantage"] = (1.0 - summary["mse"] / base) if base > 0 else float("nan")
        summary["per_target"] = targets
        return summary
