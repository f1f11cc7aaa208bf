"""Alternating Descent: coordinate-wise minimisation of the s-stress.

Implements

- I. Dokmanic, R. Parhizkar, J. Ranieri, M. Vetterli, "Euclidean Distance
  Matrices: Essential Theory, Algorithms and Applications", IEEE Signal
  Processing Magazine 32(6):12-30, 2015 ("DPRV15"), Algorithm 4
  (Alternating Descent);
- R. Parhizkar, "Euclidean Distance Matrices: Properties, Algorithms and
  Applications", PhD thesis, EPFL, 2013 (infoscience record 196439, cited as
  2022 by seed paper 000), Algorithm 3.1,

the method seed paper 000 (Damiani, Rodina, Decherchi, 2024, section 4.1)
found most effective at rebuilding ``D_X`` from a leaked ``D_XW``.

The s-stress ``sum over known (i, j) of (||x_i - x_j||^2 - D_ij)^2`` is a
quartic in any single coordinate ``x_ik``; its minimiser along that coordinate
is a real root of a cubic, found here in closed form. Updating a coordinate of
point i only involves the points i is connected to (has a known distance
with), so points that share no known distance can be updated at the same time
with exactly the result of updating them one after the other. The known-entry
graph is therefore greedily coloured and each colour class is updated as one
vectorised step: a Gauss-Seidel sweep in a particular point order, not a
Jacobi approximation. For the attack's structure (``D_X`` hidden) all private
points form one class, which is what makes n = 1,000 fast.

Step by step against the algorithm (DPRV15 Algorithm 4, and edmbox's
``alternating_descent.m``, the MATLAB code the seed paper ran):

- free entries: the points' coordinates; the s-stress sums over the known pairs
  only (edmbox: the nonzero entries), the hidden ones never enter it. Same here.
- the step: ``f'(t)/4 = k t^3 + 3 sum a_j t^2 + sum (2 a_j^2 + r_j) t + sum a_j r_j``
  with ``a_j`` the coordinate differences and ``r_j`` the residuals (edmbox's
  ``a, b, c, d`` over 4); every real root is tried and the lowest s-stress wins.
  Same (:func:`best_quartic_step`), with a rescaled closed form and a Newton polish.
- order: Gauss-Seidel, each point's coordinates one after another, points in
  turn. edmbox takes points in index order (the hidden block first); here
  colour classes by degree (landmarks first, then all hidden points at once).
  From the same start, with the same point order, the iterates agree with a
  plain loop implementation to rounding (``tests/geometry/test_edm_descent_reference.py``);
  another order is another, equally valid, sweep.
- centring: edmbox centres after every coordinate; here after every sweep
  (distances, hence every later step, do not depend on a translation).
- start: edmbox starts every point at the origin; DPRV15 leaves it open. Here
  ``init`` chooses; the default is the anchored (multilateration) start.
- stopping: edmbox runs a fixed 50 sweeps; here at most ``max_iter`` sweeps,
  fewer when a sweep lowers the s-stress by less than ``tol`` of its value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedsec.geometry._checks import (
    Progress,
    Report,
    completer_inputs,
    described,
    float_matrix,
    report,
    tracked,
)
from fedsec.geometry.completers._spectral import blas_threads
from fedsec.geometry.completers.descent_starts import anchored_start, shortest_path_start
from fedsec.geometry.edm import edm
from fedsec.validation import check_choice, param_error

OWNER = "alternating_descent"
INITS = ("anchored", "shortest-path", "zeros", "random")


def alternating_descent(
    D: Any, mask: Any, dim: int, *, rng: np.random.Generator, max_iter: int = 200,
    tol: float = 1e-7, init: Any = "anchored", progress: Progress | None = None,
    on_convergence: Report | None = None,
) -> np.ndarray:
    """Complete an EDM by minimising the s-stress one coordinate at a time.

    Each sweep visits every point and every coordinate once; the coordinate
    moves to the global minimiser of the s-stress along it (the best real root
    of a cubic, in closed form). The known distances are not re-imposed: the
    result is the EDM of the fitted points, so it is an exact EDM of embedding
    dimension ``dim``.

    Parameters
    ----------
    D : array_like, shape (N, N)
        Partially known squared distances; unknown entries may hold anything
        (NaN included). The diagonal is treated as zero.
    mask : array_like of bool, shape (N, N)
        Symmetric; True where ``D`` is known.
    dim : int
        Embedding dimension of the points.
    rng : numpy.random.Generator
        Draws the starting configuration when ``init="random"``.
    max_iter : int, default 200
        Maximum number of sweeps.
    tol : float, default 1e-7
        Stop when a sweep lowers the s-stress by less than ``tol`` times its
        previous value, or when the normalised s-stress falls below ``tol**2``
        (distances fitted to about ``tol`` relative accuracy).
    init : {"anchored", "shortest-path", "zeros", "random"} or array_like of shape (N, dim)
        Starting points. ``"anchored"`` (default) places a fully known clique of
        ``dim + 1`` or more points (the landmarks, when ``D_W`` is known) by classical MDS
        and the other points by multilateration from it
        (:func:`~fedsec.geometry.completers.descent_starts.anchored_start`), else falls back
        to ``"shortest-path"``: classical MDS of the matrix whose unknown distances are
        shortest-path lengths through the known ones (the MDS-MAP initialisation of sensor
        localisation). ``"zeros"`` is the start of the reference implementation the seed
        paper ran (edmbox); ``"random"`` draws Gaussian points of the data's spread from
        ``rng``. The s-stress has local minima: on 20 random 40-point instances with 10
        landmarks in 2-D, random starts stalled in 4, shortest-path starts in none. And
        coordinate descent converges slowly where the points are badly conditioned by the
        landmarks: on Iris with 5 P landmarks (four features, so the points are determined),
        500 sweeps from the shortest-path start left the relative error on ``D_X`` above 5%
        in 7 of 20 seeds, from zeros in 5, from the anchored start in none
        (``tests/benchmarks/alternating_descent_seeds.py``).
    progress : callable, optional
        Called after each sweep with (sweep number from 1, normalised s-stress
        ``sum (||x_i - x_j||^2 - D_ij)^2 / sum D_ij^2`` over known pairs).
    on_convergence : callable, optional
        Called once at the end with the run's :class:`~fedsec.convergence.Convergence`:
        the normalised s-stress per sweep, judged with floor ``tol**2`` (distances fitted)
        and the budget ``max_iter``.

    Returns
    -------
    numpy.ndarray, shape (N, N)
        The EDM of the fitted points.

    Examples
    --------
    >>> from fedsec.geometry import landmark_problem
    >>> rng = np.random.default_rng(0)
    >>> problem = landmark_problem(30, 5, rng=rng)
    >>> D_hat = alternating_descent(problem.D, problem.mask, 2, rng=rng)
    >>> bool(problem.error(D_hat) < 1e-3)
    True
    """
    values, known, dim, rng, max_iter, tol, progress, on_convergence = completer_inputs(
        D, mask, dim, rng, max_iter, tol, progress, on_convergence, owner=OWNER)
    progress = tracked(progress, on_convergence)
    with blas_threads(None):  # thousands of small steps: one BLAS thread is fastest
        X, stopped_early = _fit(values, known, dim, rng, max_iter, tol, init, progress)
    report(on_convergence, progress, budget=max_iter, floor=tol**2,
           stopped_early=stopped_early, stationary=True)
    return edm(X)


def _fit(values: np.ndarray, known: np.ndarray, dim: int, rng: np.random.Generator,
         max_iter: int, tol: float, init: Any, progress: Progress | None
         ) -> tuple[np.ndarray, bool]:
    """The descent itself; returns the fitted points and whether its own rule stopped it."""
    X = starting_points(values, known, dim, rng, init)
    rows, cols = np.nonzero(np.triu(known, 1))
    target = values[rows, cols]
    edge = np.full(known.shape, -1, dtype=np.int64)
    edge[rows, cols] = edge[cols, rows] = np.arange(rows.size)
    classes = [_ClassBlock(members, known, edge) for members in colour_classes(known)]
    norm = max(float(np.sum(target**2)), 1e-300)
    residual = _residuals(X, rows, cols, target)
    stress = float(residual @ residual) / norm
    for sweep in range(1, max_iter + 1):
        for block in classes:
            for axis in range(dim):
                block.update(X, axis, residual)
        X -= X.mean(axis=0)
        residual = _residuals(X, rows, cols, target)  # afresh: no drift from the updates
        previous, stress = stress, float(residual @ residual) / norm
        if progress is not None:
            progress(sweep, stress)
        if previous - stress <= tol * previous or stress <= tol**2:
            return X, True
    return X, False


def starting_points(values: np.ndarray, known: np.ndarray, dim: int, rng: np.random.Generator,
                    init: Any) -> np.ndarray:
    """The starting configuration named by ``init`` (see :func:`alternating_descent`)."""
    n_points = values.shape[0]
    if not isinstance(init, str):
        X = float_matrix(init, owner=OWNER, name="init").copy()
        if X.shape != (n_points, dim):
            raise param_error(OWNER, "init", f"an array of shape ({n_points}, {dim})",
                              described(f"an array of shape {X.shape}"))
        return X
    init = check_choice(init, owner=OWNER, name="init", choices=INITS)
    if init == "random":
        spread = float(values[known].mean()) if known.any() else 1.0
        return rng.normal(scale=np.sqrt(max(spread, 1e-300) / (2 * dim)), size=(n_points, dim))
    if init == "zeros":
        return np.zeros((n_points, dim))
    if init == "shortest-path":
        return shortest_path_start(values, known, dim)
    return anchored_start(values, known, dim)


def colour_classes(known: np.ndarray) -> list[np.ndarray]:
    """Greedy colouring of the known-entry graph, largest degree first.

    Returns the colour classes: sets of points with no known distance between
    any two of them.
    """
    n_points = known.shape[0]
    degree = known.sum(axis=1)
    colour = np.full(n_points, -1)
    for point in np.argsort(-degree, kind="stable"):
        used = colour[known[point]]
        candidates = np.arange(used.size + 1)
        colour[point] = int(candidates[~np.isin(candidates, used)][0])
    return [np.flatnonzero(colour == c) for c in range(colour.max() + 1)]


class _ClassBlock:
    """The known distances between one colour class and its neighbours.

    The residuals ``||x_i - x_j||^2 - D_ij`` of all known pairs live in one array indexed by
    pair; a class reads its own and, after moving a coordinate by ``t``, adds
    ``t^2 + 2 a_ij t`` to them (``a_ij`` the coordinate difference before the move). A
    coordinate update so costs one pass over the class's pairs, not one per dimension.
    """

    def __init__(self, members: np.ndarray, known: np.ndarray, edge: np.ndarray) -> None:
        self.members = members
        self.neighbours = np.flatnonzero(known[members].any(axis=0))
        block = known[np.ix_(members, self.neighbours)]
        self.flat = np.flatnonzero(block)
        self.pairs = edge[np.ix_(members, self.neighbours)].ravel()[self.flat]
        self.weight = block.astype(float)
        self.count = self.weight.sum(axis=1)

    def update(self, X: np.ndarray, axis: int, residual: np.ndarray) -> None:
        """Move coordinate ``axis`` of every member to its s-stress minimiser."""
        if self.neighbours.size == 0:
            return
        a = X[self.members, axis][:, None] - X[self.neighbours, axis][None, :]
        r = np.zeros(a.shape)
        r.ravel()[self.flat] = residual[self.pairs]
        w = self.weight
        sum_a = np.einsum("ij,ij->i", w, a)
        sum_aa = np.einsum("ij,ij,ij->i", w, a, a)
        sum_r = r.sum(axis=1)
        sum_ar = np.einsum("ij,ij->i", a, r)
        active = self.count > 0
        step = np.zeros(self.members.size)
        step[active] = best_quartic_step(self.count[active], sum_a[active], sum_aa[active],
                                         sum_r[active], sum_ar[active])
        X[self.members, axis] += step
        change = step[:, None] * (step[:, None] + 2.0 * a)
        residual[self.pairs] += change.ravel()[self.flat]


def best_quartic_step(count: np.ndarray, sum_a: np.ndarray, sum_aa: np.ndarray,
                      sum_r: np.ndarray, sum_ar: np.ndarray) -> np.ndarray:
    """Global minimiser of ``f(t) = sum_j (t^2 + 2 a_j t + r_j)^2`` for each row.

    ``f'(t) / 4 = c t^3 + 3 A t^2 + (2 AA + R) t + AR`` with the sums given;
    every real root of this cubic is a candidate, and the one with the lowest
    ``f(t) - f(0) = c t^4 + 4 A t^3 + 2 (2 AA + R) t^2 + 4 AR t`` wins.
    """
    b = 3.0 * sum_a / count
    c = (2.0 * sum_aa + sum_r) / count
    d = sum_ar / count
    roots = _cubic_real_roots(b, c, d)
    for _ in range(2):  # Newton polish against rounding in the closed form
        value = ((roots + b[:, None]) * roots + c[:, None]) * roots + d[:, None]
        slope = (3.0 * roots + 2.0 * b[:, None]) * roots + c[:, None]
        safe = np.abs(slope) > 1e-300
        roots = np.where(safe, roots - value / np.where(safe, slope, 1.0), roots)
    t = roots
    gain = (((count[:, None] * t + 4.0 * sum_a[:, None]) * t
             + 2.0 * (2.0 * sum_aa + sum_r)[:, None]) * t + 4.0 * sum_ar[:, None]) * t
    gain = np.where(np.isfinite(gain), gain, np.inf)
    best = np.argmin(gain, axis=1)
    step = t[np.arange(t.shape[0]), best]
    return np.where(gain[np.arange(t.shape[0]), best] < 0.0, step, 0.0)


def _cubic_real_roots(b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Real roots of ``t^3 + b t^2 + c t + d`` per row, shape (k, 3).

    Each cubic is first rescaled (``t = s u`` with ``s`` the root-size bound
    ``max(|b|, |c|^1/2, |d|^1/3)``) so the closed forms neither overflow nor
    underflow. Rows with three real roots (discriminant <= a rounding margin,
    which also catches double roots) use the trigonometric form; the others a
    cancellation-free Cardano form, with the single root repeated.
    """
    size = np.maximum.reduce([np.abs(b), np.sqrt(np.abs(c)), np.cbrt(np.abs(d))])
    zero = size == 0.0
    s = np.where(zero, 1.0, size)
    b, c, d = b / s, c / s / s, d / s / s / s  # stepwise: s**3 could underflow
    shift = b / 3.0
    p = c - b * shift
    q = 2.0 * shift**3 - shift * c + d
    disc = (q / 2.0) ** 2 + (p / 3.0) ** 3
    roots = np.empty((b.size, 3))
    one = disc > 1e-12
    if one.any():
        qo, po = q[one], p[one]
        u = np.cbrt(-qo / 2.0 - np.copysign(np.sqrt(disc[one]), qo))
        safe = u != 0.0
        t = np.where(safe, u - po / (3.0 * np.where(safe, u, 1.0)), 0.0)
        roots[one] = t[:, None]
    three = ~one
    if three.any():
        pt, qt = np.minimum(p[three], 0.0), q[three]
        radius = 2.0 * np.sqrt(-pt / 3.0)
        safe = radius > 1e-12
        cos_arg = np.where(safe, 3.0 * qt / (np.where(safe, pt * radius, -1.0)), 0.0)
        angle = np.arccos(np.clip(cos_arg, -1.0, 1.0)) / 3.0
        k = np.arange(3)[None, :]
        roots[three] = radius[:, None] * np.cos(angle[:, None] - 2.0 * np.pi * k / 3.0)
    roots -= shift[:, None]
    return np.where(zero[:, None], 0.0, roots * s[:, None])


def _residuals(X: np.ndarray, rows: np.ndarray, cols: np.ndarray, target: np.ndarray
               ) -> np.ndarray:
    diff = X[rows] - X[cols]
    return np.einsum("ij,ij->i", diff, diff) - target
