"""Multilateration below ``d + 1`` landmarks: two estimates of each point, one kept per block.

With ``k <= d`` known distances a point is known only to lie on a sphere of dimension ``d -
k`` (radius ``rho``) around its projection onto the landmarks' affine hull (see
:mod:`fedsec.geometry.sphere_prior`). Two estimates:

- ``"affine-hull"``: the sphere's centre, the mean of the consistent positions when nothing
  favours one of them; when ``k = d`` leaves two mirror points, the one inside (or nearer) the
  box the features are scaled to, ``[0, 1]^d`` when every anchor lies in it
  (:func:`nearest_consistent`);
- ``"isotropic-prior"``: the posterior mean under an isotropic Gaussian prior on the points
  whose offset from the hull and scale are fitted to the block's radii (empirical Bayes), its
  direction towards the box's centre when that lies off the hull
  (:func:`~fedsec.geometry.sphere_prior.isotropic_prior_points`).

Which one a block keeps is decided by its own fit, never by the truth: the radii are all the
observed distances say about the hidden part, and the prior is kept when it explains them
significantly better than the best prior centred on the hull (the likelihood-ratio statistic
above :data:`~fedsec.geometry.sphere_prior.CHI2_1_95`, a chi-square test at 5%). Each block's
choice, statistic and fitted prior go into the attack's ``info["below_hull"]``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from fedsec.geometry.completers.descent_starts import multilaterate_points
from fedsec.geometry.sphere_prior import CHI2_1_95, isotropic_prior_points

HULL = "affine-hull"
PRIOR = "isotropic-prior"
ESTIMATORS = ("auto", HULL, PRIOR)
"""``"auto"`` keeps the better of the two per group of rows (module notes); the others force
one."""


class Placement(NamedTuple):
    """Points, how far each is determined (the sphere's radius; 0 when identified), and per
    group of rows below ``d + 1`` known distances the estimate kept and why."""

    points: np.ndarray
    spread: np.ndarray
    below: list[dict[str, Any]]


def place_points(D: np.ndarray, W: np.ndarray, *, estimator: str = "auto") -> Placement:
    """Points from squared distances to known anchors (rows with the same known entries
    together), with the estimate chosen per group below ``d + 1`` (module notes; another of
    :data:`ESTIMATORS` forces one). Rows with no known distance are NaN.

    Examples
    --------
    >>> W = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> x = np.array([[0.3, 0.6]])
    >>> D = ((x[:, None, :] - W[None]) ** 2).sum(-1)
    >>> placed = place_points(D[:, :2], W[:2])  # two anchors in the plane: two mirror points
    >>> placed.points.round(6).tolist(), placed.below[0]["estimator"]
    ([[0.3, 0.6]], 'affine-hull')
    """
    D = np.asarray(D, dtype=np.float64)
    n, d = D.shape[0], W.shape[1]
    out, spread = np.full((n, d), np.nan), np.full(n, np.nan)
    below: list[dict[str, Any]] = []
    known = np.isfinite(D)
    for pattern in np.unique(known, axis=0):
        rows = np.flatnonzero((known == pattern).all(axis=1))
        if pattern.sum() == 0:
            continue
        if pattern.sum() >= d + 1:
            out[rows] = multilaterate_points(D[np.ix_(rows, pattern)], W[pattern])
            spread[rows] = 0.0
            continue
        box = feature_box(W)
        part, anchors = D[np.ix_(rows, pattern)], W[pattern]
        out[rows], spread[rows] = nearest_consistent(part, anchors, box)
        record: dict[str, Any] = {"rows": int(rows.size), "known": int(pattern.sum()),
                                  "estimator": HULL}
        if estimator != HULL:
            fit = isotropic_prior_points(part, anchors, direction=(box[0] + box[1]) / 2)
            record.update(likelihood_ratio=fit.prior.statistic, prior_offset=fit.prior.offset,
                          prior_scale=fit.prior.scale)
            if estimator == PRIOR or fit.prior.statistic > CHI2_1_95:
                out[rows], record["estimator"] = fit.points, PRIOR
        below.append(record)
    return Placement(out, spread, below)


def feature_box(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the points are believed to lie: the unit box FedCG's min-max scaled features
    fill when every anchor lies in it, else the anchors' own bounding box."""
    if W.size and W.min() >= 0.0 and W.max() <= 1.0:
        return np.zeros(W.shape[1]), np.ones(W.shape[1])
    return W.min(axis=0), W.max(axis=0)


def nearest_consistent(D: np.ndarray, W: np.ndarray, box: tuple[np.ndarray, np.ndarray]
                       ) -> tuple[np.ndarray, np.ndarray]:
    """For ``k <= d`` anchors: the centre of the sphere of consistent points (or, when it is
    two mirror points, the one nearer the box), and its radius."""
    from scipy.linalg import null_space

    low, high = box
    prior = (low + high) / 2
    B = -2.0 * (W[1:] - W[0])  # differences of the equations: linear in x
    r = (D[:, 1:] - D[:, :1]) - ((W[1:] ** 2).sum(axis=1) - (W[0] ** 2).sum())[None, :]
    if len(B):
        base = prior + (r - prior @ B.T) @ np.linalg.pinv(B).T
        N = null_space(B)
    else:
        base = np.tile(prior, (len(D), 1))
        N = np.eye(W.shape[1])
    u = base - W[0]
    a = u @ N
    rho = np.sqrt(np.maximum(D[:, 0] - ((u**2).sum(axis=1) - (a**2).sum(axis=1)), 0.0))
    if N.shape[1] > 1:  # a sphere: its centre is the mean of the consistent positions
        return base - a @ N.T, rho
    centre = base - a @ N.T  # two mirror points: the one nearer the box, then its centre
    plus, minus = centre + rho[:, None] * N[:, 0], centre - rho[:, None] * N[:, 0]

    def outside(p: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.maximum(low - p, 0) + np.maximum(p - high, 0), axis=1)

    gap = outside(plus) - outside(minus)
    tie = np.isclose(gap, 0.0)
    nearer = np.linalg.norm(plus - prior, axis=1) <= np.linalg.norm(minus - prior, axis=1)
    pick = np.where(tie, nearer, gap < 0)
    return np.where(pick[:, None], plus, minus), rho
