"""The one-run audit of a Gaussian claim: guesses against a trade-off curve, not a single
(epsilon, delta).

Mahloujifar, Melis and Chaudhuri, "Auditing f-Differential Privacy in One Run" (2024,
arXiv:2410.22235), section 4: when a defence claims to be a Gaussian mechanism (noise of
scale ``sigma`` on a release of sensitivity ``s``), its claim is stronger than one (epsilon,
delta) pair: it is ``mu``-Gaussian DP with ``mu = s / sigma``, a whole trade-off curve
``G_mu(x) = Phi(Phi^-1(1 - x) - mu)`` between an adversary's two error rates. Testing the
guesses of the one-run audit (``m`` canaries, each in with probability 1/2, ``r`` guesses,
``v`` right) against that curve rejects far more than the (epsilon, delta) test of Steinke,
Nasr and Jagielski (:mod:`fedsec.privacy.empirical`), which must also allow mechanisms that
spend all their privacy on rare outputs.

The test (their capped recursion, :func:`rejects_gaussian`): start from the masses
``beta v / m`` of right and ``beta (r - v) / m`` of wrong guesses that a ``beta``-unlikely run
would need, and walk down the right guesses one by one; at each step the curve says how much
wrong-guess mass must come with the right-guess mass so far (a region of probability ``p``
under one neighbour has at least ``Phi(Phi^-1(p) - mu)`` under the other), and the extra
wrong mass drags right mass with it in the ratio ``i / (r - i)``. If the masses reached
exceed the ``r / m`` that guessing ``r`` canaries makes available, no ``mu``-GDP mechanism
explains the guesses at confidence ``1 - beta``.

The bound: the largest ``mu`` so rejected (rejection is monotone in ``mu``: a larger ``mu``
is a weaker claim), stated as the epsilon of the Gaussian mechanism with ``sigma = s / mu``
at the audit's delta (:func:`fedsec.privacy.gaussian.gaussian_epsilon`), the unit the
accountant speaks. It audits the claim the accountant makes for a Gaussian defence; for a
mechanism that claims only (epsilon, delta), use the (epsilon, delta) test.

Every function is pure, on counts and numpy arrays.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr, ndtri

from fedsec.errors import ValidationError
from fedsec.privacy.gaussian import gaussian_epsilon

#: The largest ``mu`` tried: ``mu`` 40 is epsilon in the hundreds at any useful delta, far above
#: what any number of canaries here can prove.
MU_MAX = 40.0
#: Grid points per pass of the search for the largest rejected ``mu`` (a geometric pass, then
#: three finer ones).
GRID = 48


def _check_counts(m: int, r: int, v: int, beta: float) -> None:
    if not 0 <= v <= r <= m or m < 1:
        raise ValidationError(f"The counts must satisfy 0 <= correct (v) <= guesses (r) <= "
                              f"canaries (m), m >= 1. Got v={v}, r={r}, m={m}.")
    if not 0 < beta < 1:
        raise ValidationError(f"beta (1 - confidence) must be in (0, 1). Got {beta!r} "
                              "instead.")


def rejects_gaussian(m: int, r: int, v: int, mu: np.ndarray | float,
                     beta: float = 0.05) -> np.ndarray:
    """Whether ``v`` right guesses out of ``r`` (among ``m`` canaries) reject the claim of
    ``mu``-Gaussian DP at confidence ``1 - beta``, for each ``mu`` (vectorised).

    Examples
    --------
    >>> rejects_gaussian(1000, 100, 100, [0.5, 1.0, 2.0]).tolist()  # 100 of 100 right
    [True, True, False]
    >>> rejects_gaussian(1000, 100, 50, [0.01, 5.0]).tolist()  # a coin rejects nothing
    [False, False]
    """
    _check_counts(m, r, v, beta)
    mu = np.atleast_1d(np.asarray(mu, dtype=float))
    right = np.full(mu.shape, beta * v / m)
    wrong = np.full(mu.shape, beta * (r - v) / m)
    for i in range(v - 1, -1, -1):
        floor = ndtr(ndtri(right) - mu)  # the least wrong-guess mass the curve allows
        grows = floor > wrong
        if not grows.any():
            break
        right = np.where(grows, np.minimum(right + i / (r - i) * (floor - wrong), 1.0), right)
        wrong = np.where(grows, floor, wrong)
    result: np.ndarray = right + wrong > r / m
    return result


def gaussian_mu_bound(m: int, r: int, v: int, beta: float = 0.05) -> float:
    """The largest ``mu`` whose Gaussian-DP claim the guesses reject (0 when none is, and
    :data:`MU_MAX` when every ``mu`` tried is), to about 1e-4 of its value.

    Examples
    --------
    >>> round(gaussian_mu_bound(1000, 100, 100), 3)
    1.226
    >>> gaussian_mu_bound(1000, 100, 50)
    0.0
    """
    _check_counts(m, r, v, beta)
    grid = np.geomspace(1e-3, MU_MAX, GRID)
    rejected = rejects_gaussian(m, r, v, grid, beta)
    if not rejected.any():
        return 0.0
    if rejected[-1]:
        return MU_MAX
    for _ in range(3):  # refine between the last rejected mu and the first kept one
        last = int(np.flatnonzero(rejected)[-1])
        grid = np.linspace(grid[last], grid[last + 1], GRID)
        rejected = rejects_gaussian(m, r, v, grid, beta)
    return float(grid[int(np.flatnonzero(rejected)[-1])])


def gaussian_one_run_epsilon(m: int, r: int, v: int, *, beta: float = 0.05,
                             delta: float = 1e-5) -> float:
    """The lower bound on epsilon at ``delta`` that ``v`` right guesses out of ``r`` prove
    against a Gaussian claim: the epsilon of the Gaussian mechanism at the largest rejected
    ``mu`` (0 when none is rejected).

    Examples
    --------
    >>> round(gaussian_one_run_epsilon(1000, 100, 100), 2)  # every guess right
    5.55
    >>> round(gaussian_one_run_epsilon(1000, 100, 80), 2)  # (epsilon, delta) test: 0.96
    1.4
    """
    if not 0 < delta < 1:
        raise ValidationError(f"A Gaussian claim's epsilon is stated at a delta in (0, 1). "
                              f"Got {delta!r} instead (at delta 0 every Gaussian mechanism's "
                              "epsilon is infinite).")
    mu = gaussian_mu_bound(m, r, v, beta)
    return 0.0 if mu == 0 else gaussian_epsilon(1.0 / mu, delta)
