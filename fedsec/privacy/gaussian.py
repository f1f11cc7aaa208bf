"""The analytic Gaussian mechanism: its exact (epsilon, delta) curve.

Balle and Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical
Calibration and Optimal Denoising", ICML 2018, Theorem 8: releasing ``f(x) + N(0, sigma^2 I)``
with ``||f(x) - f(x')|| <= sensitivity`` is (epsilon, delta)-DP if and only if

    Phi(s / (2 sigma) - epsilon sigma / s) - e^epsilon Phi(-s / (2 sigma) - epsilon sigma / s)
        <= delta,

with ``s`` the sensitivity and ``Phi`` the standard normal CDF. The left side is the smallest
delta for a given epsilon (:func:`gaussian_delta`); it decreases in epsilon, so the smallest
epsilon at a given delta (:func:`gaussian_epsilon`) and the smallest sigma for a target
(epsilon, delta) (:func:`gaussian_sigma`) are one-dimensional root finds. These closed forms
are the reference the accountant (:mod:`fedsec.privacy.accountant`) is tested against.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from fedsec.errors import ValidationError


def _check(sigma: float, sensitivity: float) -> None:
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValidationError(f"The Gaussian mechanism needs a noise scale sigma > 0. Got "
                              f"{sigma!r} instead (sigma 0 gives no privacy: epsilon is "
                              "infinite).")
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValidationError(f"The Gaussian mechanism needs a sensitivity > 0. Got "
                              f"{sensitivity!r} instead.")


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """The smallest delta for which the Gaussian mechanism is (epsilon, delta)-DP.

    Examples
    --------
    >>> round(gaussian_delta(0.0, 1.0), 4)  # at epsilon 0: the total variation distance
    0.3829
    >>> gaussian_delta(1.0, 2.0) < gaussian_delta(0.5, 2.0)
    True
    """
    _check(sigma, sensitivity)
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    # e^epsilon Phi(.) in logs: the product stays finite where e^epsilon alone would overflow
    value = float(norm.cdf(a - b) - np.exp(epsilon + norm.logcdf(-a - b)))
    return max(value, 0.0)


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest epsilon for which the Gaussian mechanism is (epsilon, delta)-DP.

    Examples
    --------
    >>> round(gaussian_epsilon(1.0, 1e-5), 3)
    4.377
    >>> gaussian_epsilon(1.0, 0.5)  # delta above the total variation distance: epsilon 0
    0.0
    """
    _check(sigma, sensitivity)
    if not 0 < delta < 1:
        raise ValidationError(f"delta must be in (0, 1). Got {delta!r} instead.")
    if gaussian_delta(0.0, sigma, sensitivity) <= delta:
        return 0.0
    high = 1.0
    while gaussian_delta(high, sigma, sensitivity) > delta:
        high *= 2.0
        if high > 1e6:  # pragma: no cover - needs sigma / sensitivity below about 1e-3
            raise ValidationError(f"epsilon exceeds 1e6 for sigma/sensitivity "
                                  f"{sigma / sensitivity:.3g} at delta {delta:g}.")
    return float(brentq(lambda e: gaussian_delta(e, sigma, sensitivity) - delta, 0.0, high,
                        xtol=1e-12, rtol=1e-12))


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest noise scale making the Gaussian mechanism (epsilon, delta)-DP (the
    analytic calibration).

    Examples
    --------
    >>> sigma = gaussian_sigma(1.0, 1e-5)
    >>> round(sigma, 3), round(gaussian_epsilon(sigma, 1e-5), 6)
    (3.731, 1.0)
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValidationError(f"epsilon must be a finite number > 0. Got {epsilon!r} instead.")
    if not 0 < delta < 1:
        raise ValidationError(f"delta must be in (0, 1). Got {delta!r} instead.")
    _check(1.0, sensitivity)
    low, high = 1e-6 * sensitivity, sensitivity
    while gaussian_delta(epsilon, high, sensitivity) > delta:
        high *= 2.0
    return float(brentq(lambda s: gaussian_delta(epsilon, s, sensitivity) - delta, low, high,
                        xtol=1e-12, rtol=1e-12))
