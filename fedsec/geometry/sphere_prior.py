"""Points known only to lie on a sphere: the posterior mean under an isotropic Gaussian prior.

With squared distances ``D_j = ||x - w_j||^2`` to ``k <= d`` anchors in ``R^d``, a point is
determined only up to its component orthogonal to the anchors' affine hull: the differences of
the equations fix its projection ``p`` onto the hull, and ``D_0 - ||p - w_0||^2`` fixes the
norm ``rho`` of the rest, which lies in the ``q``-dimensional orthogonal complement (``q = d -
rank``, ``rank`` the dimension of the hull). The sphere's centre ``p`` (the affine-hull
projection) is the best guess when nothing favours a direction. Under an isotropic Gaussian
prior ``x ~ N(mu, s^2 I)`` whose mean lies at distance ``r`` from the hull along a unit vector
``e`` of the complement, the orthogonal part ``z`` (``||z|| = rho``) has density proportional
to ``exp(z . e r / s^2)`` on the sphere: a von Mises-Fisher distribution (K. V. Mardia,
P. E. Jupp, "Directional Statistics", Wiley 2000, section 9.3) with concentration ``kappa = rho
r / s^2``, whose mean is ``rho A_q(kappa) e`` with ``A_q = I_{q/2} / I_{q/2 - 1}`` (modified
Bessel functions). That posterior mean is the estimate here (MAP: ``rho e``).

The prior is fitted to the block by its distances alone (empirical Bayes): under it the radii
``rho / s`` follow a noncentral chi distribution with ``q`` degrees of freedom and
noncentrality ``r / s``, and ``(r, s)`` maximise its likelihood along ``r^2 + q s^2 =
mean(rho^2)`` (the second moment matched; at ``r = 0`` this is the exact maximum, the
central chi's). Twice the log-likelihood gain over ``r = 0``, :attr:`RadiusPrior.statistic`,
is the likelihood-ratio statistic of "the points' mean lies off the hull": callers keep the
affine-hull estimate unless it exceeds :data:`CHI2_1_95` (a chi-square test with one degree of
freedom at 5%). The direction ``e`` is not identified by distances (a rotation about the hull
changes none of them): it is the direction of a prior mean the caller knows (the centre of
the box min-max scaled features fill), else the first complement axis of the attacker's own
frame, which is then defined up to that rotation anyway.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> W = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # the plane z = 0
>>> X = rng.normal([0.3, 0.3, 0.8], 0.1, size=(200, 3))  # points well above it
>>> D = ((X[:, None] - W[None]) ** 2).sum(-1)
>>> fit = isotropic_prior_points(D, W, direction=np.array([0.0, 0.0, 1.0]))
>>> bool(fit.prior.statistic > CHI2_1_95), round(float(fit.prior.offset), 1)
(True, 0.8)
>>> bool(np.abs(fit.points - X).mean() < np.abs(fit.centre - X).mean())
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special
from scipy.optimize import minimize_scalar

CHI2_1_95 = 3.841458820694124
"""The 95% quantile of the chi-square distribution with one degree of freedom."""
MIN_ROWS = 20
"""Fewer rows than this fit no prior (the likelihood of a few radii peaks at a degenerate
``s -> 0``); their estimate stays the sphere's centre."""
GRID = 200
"""Points of the search over the prior's share ``r^2 / mean(rho^2)`` in ``[0, MAX_SHARE]``."""
MAX_SHARE = 0.99


class RadiusPrior(NamedTuple):
    """The isotropic prior fitted to a block's radii."""

    offset: float
    """``r``: distance of the prior mean from the hull (0: centred on it)."""
    scale: float
    """``s``: the prior's standard deviation per coordinate."""
    statistic: float
    """Twice the log-likelihood gain of this prior over the best one centred on the hull."""


class PriorFit(NamedTuple):
    """The posterior-mean points, the sphere centres and radii, and the prior behind them."""

    points: np.ndarray
    centre: np.ndarray
    radius: np.ndarray
    prior: RadiusPrior


def hull_split(D: np.ndarray, W: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each point's projection onto the anchors' affine hull, the radius of the rest, and an
    orthonormal basis (columns) of the hull's orthogonal complement.

    Examples
    --------
    >>> W = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> centre, radius, basis = hull_split(np.array([[0.25 + 4.0, 0.25 + 4.0]]), W)
    >>> centre.tolist(), radius.tolist(), np.abs(basis).ravel().tolist()
    ([[0.5, 0.0]], [2.0], [0.0, 1.0])
    """
    D = np.asarray(D, dtype=np.float64)
    B = W[1:] - W[0]
    _, values, Vt = np.linalg.svd(B, full_matrices=True) if len(B) else (None, np.zeros(0),
                                                                        np.eye(W.shape[1]))
    rank = int(np.sum(values > 1e-12 * max(float(values.max(initial=0.0)), 1e-300)))
    rhs = (D[:, :1] - D[:, 1:] + (B**2).sum(axis=1)[None, :]) / 2.0
    along = rhs @ np.linalg.pinv(B).T if len(B) else np.zeros((len(D), W.shape[1]))
    radius = np.sqrt(np.maximum(D[:, 0] - (along**2).sum(axis=1), 0.0))
    return W[0] + along, radius, Vt[rank:].T


def log_bessel_i(order: float, z: np.ndarray) -> np.ndarray:
    """``log I_order(z)`` for ``z >= 0``, stable where ``scipy.special.ive`` under- or
    overflows (the series' leading term near 0).

    Examples
    --------
    >>> round(float(log_bessel_i(-0.5, np.array(2.0))), 12) == round(
    ...     float(np.log(np.sqrt(2 / (np.pi * 2.0)) * np.cosh(2.0))), 12)
    True
    """
    z = np.maximum(np.asarray(z, dtype=np.float64), 1e-300)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        direct = np.log(special.ive(order, z)) + z
    series = order * np.log(z / 2.0) - special.gammaln(order + 1.0)
    return np.where(np.isfinite(direct) & (z > 1e-8), direct, series)


def radius_log_likelihood(radius: np.ndarray, q: int, offset: float, scale: float
                          ) -> np.ndarray:
    """Log-density of each radius under the prior: ``radius / scale`` is noncentral chi with
    ``q`` degrees of freedom and noncentrality ``offset / scale`` (central chi at 0).

    Examples
    --------
    >>> rho = np.array([0.5, 1.0, 1.5])
    >>> central = radius_log_likelihood(rho, 3, 0.0, 1.0)
    >>> near = radius_log_likelihood(rho, 3, 1e-6, 1.0)
    >>> bool(np.allclose(central, near, atol=1e-9))
    True
    """
    x = np.maximum(np.asarray(radius, dtype=np.float64) / scale, 1e-300)
    if offset <= 0.0:
        return ((q - 1) * np.log(x) - x**2 / 2 - (q / 2 - 1) * np.log(2.0)
                - special.gammaln(q / 2) - np.log(scale))
    ratio = offset / scale
    return (-(x**2 + ratio**2) / 2 + (q / 2) * np.log(x) + (1 - q / 2) * np.log(ratio)
            + log_bessel_i(q / 2 - 1, ratio * x) - np.log(scale))


def fit_radius_prior(radius: np.ndarray, q: int) -> RadiusPrior:
    """The isotropic prior that best explains the radii (module notes); the statistic is 0
    and the offset 0 when fewer than :data:`MIN_ROWS` radii or none above 0.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> z = rng.normal(0.0, 0.2, size=(500, 2))  # centred on the hull
    >>> fit = fit_radius_prior(np.linalg.norm(z, axis=1), 2)
    >>> bool(fit.statistic < CHI2_1_95), round(fit.scale, 1)
    (True, 0.2)
    """
    rho = np.asarray(radius, dtype=np.float64)
    rho = rho[np.isfinite(rho)]
    second = float(np.mean(rho**2)) if rho.size else 0.0
    if rho.size < MIN_ROWS or second <= 0.0:
        return RadiusPrior(0.0, float(np.sqrt(second / q)) if second > 0 else 0.0, 0.0)

    def loglik(share: float) -> float:
        offset, scale = np.sqrt(share * second), np.sqrt((1.0 - share) * second / q)
        return float(np.sum(radius_log_likelihood(rho, q, offset, scale)))

    shares = np.linspace(0.0, MAX_SHARE, GRID)
    values = np.array([loglik(float(t)) for t in shares])
    best = int(np.argmax(values))
    share, top = float(shares[best]), float(values[best])
    if best > 0:  # refine inside the grid cells around the best share
        refined = minimize_scalar(lambda t: -loglik(t), method="bounded", bounds=(
            float(shares[best - 1]), float(shares[min(best + 1, GRID - 1)])),
            options={"xatol": 1e-6})
        if -float(refined.fun) > top:
            share, top = float(refined.x), -float(refined.fun)
    return RadiusPrior(float(np.sqrt(share * second)),
                       float(np.sqrt((1.0 - share) * second / q)),
                       max(2.0 * (top - float(values[0])), 0.0))


def mean_resultant_length(q: int, kappa: np.ndarray) -> np.ndarray:
    """``A_q(kappa) = I_{q/2}(kappa) / I_{q/2 - 1}(kappa)``: the length of the mean of a von
    Mises-Fisher distribution on the unit sphere of ``R^q`` (``tanh`` for ``q = 1``).

    Examples
    --------
    >>> bool(np.allclose(mean_resultant_length(1, np.array([0.5, 3.0])), np.tanh([0.5, 3.0])))
    True
    """
    kappa = np.asarray(kappa, dtype=np.float64)
    ratio = np.exp(log_bessel_i(q / 2, kappa) - log_bessel_i(q / 2 - 1, kappa))
    return np.where(kappa > 0, np.minimum(ratio, 1.0), 0.0)


def isotropic_prior_points(D: np.ndarray, W: np.ndarray, *,
                           direction: np.ndarray | None = None) -> PriorFit:
    """The posterior mean of each point under the isotropic prior fitted to the block.

    Parameters
    ----------
    D : numpy.ndarray, shape (n, k)
        Squared distances to the ``k`` anchors, all known.
    W : numpy.ndarray, shape (k, d)
        The anchors, ``k <= d`` (or degenerate: their hull has dimension below ``d``).
    direction : numpy.ndarray, shape (d,), optional
        A point the prior mean is believed to lie towards (for example the centre of the box
        the features are scaled to); its component orthogonal to the hull gives ``e``. The
        first complement axis when omitted or on the hull.

    Returns
    -------
    PriorFit
        ``points`` the posterior means, ``centre`` the affine-hull projections, ``radius``
        the spheres' radii and ``prior`` the fitted prior (offset 0: ``points == centre``).
    """
    centre, radius, basis = hull_split(D, W)
    q = basis.shape[1]
    if q == 0:
        return PriorFit(centre, centre, radius, RadiusPrior(0.0, 0.0, 0.0))
    prior = fit_radius_prior(radius, q)
    axis = np.zeros(q)
    axis[0] = 1.0
    if direction is not None:
        toward = basis.T @ (np.asarray(direction, dtype=np.float64) - W[0])
        norm = float(np.linalg.norm(toward))
        if norm > 1e-12:
            axis = toward / norm
    if prior.offset <= 0.0 or prior.scale <= 0.0:
        return PriorFit(centre, centre, radius, prior)
    length = radius * mean_resultant_length(q, radius * prior.offset / prior.scale**2)
    return PriorFit(centre + length[:, None] * (basis @ axis)[None, :], centre, radius, prior)
