"""Semidefinite relaxation (SDR) of EDM completion, solved with cvxpy.

Implements

- A. Y. Alfakih, A. Khandani, H. Wolkowicz, "Solving Euclidean Distance
  Matrix Completion Problems via Semidefinite Programming", Computational
  Optimization and Applications 12:13-30, 1999: EDM completion as a convex
  program over a positive semidefinite Gram matrix;
- P. Biswas, Y. Ye, "Semidefinite Programming for Ad Hoc Wireless Sensor
  Network Localization", IPSN 2004: the same relaxation with a fit to noisy
  distances and a trace regulariser;
- I. Dokmanic, R. Parhizkar, J. Ranieri, M. Vetterli, "Euclidean Distance
  Matrices: Essential Theory, Algorithms and Applications", IEEE Signal
  Processing Magazine 32(6):12-30, 2015 ("DPRV15"), their SDR algorithm (cited
  by seed paper 000, Damiani, Rodina, Decherchi, 2024, section 4.1, where the
  MATLAB/CVX version ran out of memory beyond the toy dataset).

The variable is a centred Gram matrix ``G`` (PSD, ``G 1 = 0``); the EDM it
defines is ``E(G)_ij = G_ii + G_jj - 2 G_ij``, linear in ``G``. The program
minimises ``fit(E(G) - D on known entries) + trace_weight * trace(G) / N``
with the data scaled to unit mean, then rounds the solution to rank ``dim``
(DPRV15: threshold the rank after the solve). A positive ``trace_weight`` is
the low-rank (nuclear-norm) heuristic; a negative one reproduces DPRV15's
"maximise trace" (maximum-variance) variant.

Formulation and solver were chosen by measurement (N = n + m = 300 points, m =
50 landmarks, d = 3, ``D_X`` hidden, 2 cores): the Frobenius-norm fit with SCS
at ``tol = 1e-4`` solves in about 4-7 s with a relative ``D_X`` error of
1e-5 to 2e-4; the squared fit is as fast but the trace term biases it (error
2e-3 to 1e-2); the absolute (l1) fit is as accurate but about twice as slow.
Clarabel, an interior-point method, already takes seconds at N = 50 and is
hopeless at N = 300. Each SCS
iteration costs an eigendecomposition of an N x N matrix, so time grows like
N^3: about a minute at N = 600, several minutes at N = 1,000.

The solver ``"burer-monteiro"``
(:mod:`~fedsec.geometry.completers.sdr_low_rank`) solves the
equality-constrained form of the same relaxation (the known distances
imposed, ``min trace(G)``) over ``G = Y Y^T`` with ``dim`` columns, without
cvxpy; ``tests/benchmarks/bench_sdr.py`` compares the two side by side. Where
the known distances fix the completion (the landmarks affinely span the
space) both forms have the same answer and the low-rank solver reaches it to
about 1e-10 instead of 1e-4, at a thousand points in a second or two; where
they do not (fewer landmarks than dimensions) the two forms answer
differently, and the misfit form recovers more: on FedCG's Figure 8
(Ionosphere, 100 points, m = 20, P/U/N landmarks) relative errors of 0.07,
0.30 and 0.26 against 0.15, 0.41 and 0.37, in 0.2 s against 6-22 s per
block. So the default, ``solver="auto"`` (:func:`choose_solver`), keeps SCS
where it finishes in seconds, up to :data:`AUTO_LIMIT` points, and takes the
low-rank solver above, where SCS would take a minute or more.

Convergence (``on_convergence``): the low-rank solver reports its constraint
residual per augmented-Lagrangian iteration, judged by
:func:`fedsec.convergence.judge` with floor ``tol``; SCS and Clarabel report
only their status, read as "converged" (optimal), "budget" (inaccurate after
``max_iter`` iterations) or "stalled" (inaccurate before).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from fedsec.convergence import Convergence, judge
from fedsec.errors import FedsecError, ValidationError
from fedsec.geometry._checks import (
    Progress,
    Report,
    completer_inputs,
)
from fedsec.geometry.completers._spectral import blas_threads, top_eigenpairs
from fedsec.geometry.completers.sdr_low_rank import shortest_path_mds, solve_low_rank
from fedsec.validation import check_choice, check_float, check_int, param_error

OWNER = "semidefinite_relaxation"
FITS = ("frobenius", "squared", "absolute")
LOW_RANK = "burer-monteiro"
AUTO = "auto"
SOLVERS = (AUTO, LOW_RANK, "SCS", "CLARABEL")
AUTO_LIMIT = 350
"""Largest problem (points N = n + m) ``solver="auto"`` gives SCS; larger ones go to the
low-rank solver. Measured with ``tests/benchmarks/bench_sdr.py`` (m = 50, d = 3, 2 cores
shared with other work): SCS took 10.5-10.7 s at N = 300, 11.7 s at 350, 25-27 s at 400 and
94 s at 500; the low-rank solver 0.2-0.6 s up to 400 points."""
# Largest problem each solver takes by default: the cvxpy solvers' time grows like N^3
# per iteration; the low-rank solver's start (all-pairs shortest paths) and answer are N x N.
MAX_POINTS = {LOW_RANK: 5000, "SCS": 1000, "CLARABEL": 1000}
TOLERANCES = {LOW_RANK: 1e-9, "SCS": 1e-4, "CLARABEL": 1e-4}


class SolverError(FedsecError, RuntimeError):
    """The semidefinite program could not be solved."""


def semidefinite_relaxation(
    D: Any, mask: Any, dim: int, *, rng: np.random.Generator, max_iter: int = 20_000,
    tol: float | None = None, fit: str | None = None, trace_weight: float | None = None,
    solver: str = AUTO, max_points: int | None = None, progress: Progress | None = None,
    on_convergence: Report | None = None,
) -> np.ndarray:
    """Complete an EDM with a semidefinite relaxation over the Gram matrix.

    Parameters
    ----------
    D : array_like, shape (N, N)
        Partially known squared distances (unknown entries are ignored).
    mask : array_like of bool, shape (N, N)
        Symmetric; True where ``D`` is known.
    dim : int
        Embedding dimension the solution is rounded to.
    rng : numpy.random.Generator
        Starts the Lanczos iteration of the warm start (``"burer-monteiro"``);
        the cvxpy solves are deterministic.
    max_iter : int, default 20000
        Solver iteration limit (augmented-Lagrangian iterations of
        ``"burer-monteiro"``; SCS ``max_iters``; Clarabel ``max_iter``).
    tol : float, optional
        Solver accuracy on data scaled to unit mean: the root-mean-square
        residual of the known distances for ``"burer-monteiro"`` (default
        1e-9); SCS ``eps_abs`` and ``eps_rel``, Clarabel gap and feasibility
        tolerances (default 1e-4).
    fit : {"frobenius", "squared", "absolute"}, optional
        Norm of the misfit on the known entries (l2, squared l2 or l1) of the
        misfit form; SCS and Clarabel only (default "frobenius").
    trace_weight : float, optional
        Weight of ``trace(G) / N`` in the misfit form; negative maximises the
        trace as DPRV15 do (can be unbounded when some point has no known
        distance). SCS and Clarabel only (default 1e-3).
    solver : {"auto", "SCS", "CLARABEL", "burer-monteiro"}, default "auto"
        ``"burer-monteiro"`` solves the equality-constrained form in low-rank
        factored form (:mod:`~fedsec.geometry.completers.sdr_low_rank`);
        ``"SCS"`` and ``"CLARABEL"`` (both ship with cvxpy) the misfit form;
        ``"auto"`` chooses by size (:func:`choose_solver`): SCS up to
        :data:`AUTO_LIMIT` points or when ``fit`` or ``trace_weight`` is given,
        ``"burer-monteiro"`` above.
    max_points : int, optional
        Refuse larger problems: 5000 for ``"burer-monteiro"`` (and ``"auto"``), 1000 for the
        cvxpy solvers (time grows like N^3 per iteration; see the module
        notes). Raise it to try anyway.
    progress : callable, optional
        ``"burer-monteiro"``: called after every augmented-Lagrangian
        iteration with (iteration, trace(G) / N); the cvxpy solvers expose no
        per-iteration hook, so then it is called once after the solve with
        (solver iterations, objective value).
    on_convergence : callable, optional
        Called once at the end with the run's :class:`~fedsec.convergence.Convergence`
        (see the module notes).

    Returns
    -------
    numpy.ndarray, shape (N, N)
        The EDM of the rank-``dim`` rounding of the optimal Gram matrix; the
        known entries are fitted, not re-imposed.

    Raises
    ------
    ValidationError
        For bad parameters (``fit`` or ``trace_weight`` with
        ``"burer-monteiro"``), and for N above ``max_points``.
    SolverError
        When the solver fails or reports the problem infeasible/unbounded.

    Warns
    -----
    RuntimeWarning
        When the solver stops at ``max_iter`` short of ``tol``, or (with
        ``"burer-monteiro"``) when the known distances fit no configuration
        in ``dim`` dimensions to ``tol`` (noisy data; the closest fit found
        is returned).

    Examples
    --------
    >>> from fedsec.geometry import landmark_problem
    >>> rng = np.random.default_rng(0)
    >>> problem = landmark_problem(20, 5, rng=rng)
    >>> D_hat = semidefinite_relaxation(problem.D, problem.mask, 2, rng=rng)
    >>> bool(problem.error(D_hat) < 0.01)
    True
    """
    solver = check_choice(solver, owner=OWNER, name="solver", choices=SOLVERS)
    if solver == AUTO:
        shape = np.shape(D)
        solver = choose_solver(int(shape[0]) if len(shape) else 0,
                               misfit_options=fit is not None or trace_weight is not None)
    tol = TOLERANCES[solver] if tol is None else tol
    values, known, dim, rng, max_iter, tol, progress, on_convergence = completer_inputs(
        D, mask, dim, rng, max_iter, tol, progress, on_convergence, owner=OWNER)
    if solver == LOW_RANK:
        for name, value in (("fit", fit), ("trace_weight", trace_weight)):
            if value is not None:
                raise param_error(OWNER, name, "None with solver='burer-monteiro' (it sets the "
                                  "misfit form that 'SCS' and 'CLARABEL' solve)", value)
    fit = check_choice("frobenius" if fit is None else fit, owner=OWNER, name="fit",
                       choices=FITS)
    trace_weight = check_float(1e-3 if trace_weight is None else trace_weight, owner=OWNER,
                               name="trace_weight")
    max_points = check_int(MAX_POINTS[solver] if max_points is None else max_points,
                           owner=OWNER, name="max_points", min_value=2)
    n_points = values.shape[0]
    if n_points > max_points:
        raise ValidationError(
            f"The 'D' parameter of {OWNER} must describe at most {max_points} points "
            f"(the 'max_points' limit of solver {solver!r}; with 'SCS' time grows like N^3 "
            f"per iteration, about a minute at 600 points). Got {n_points} points instead. "
            f"Use 'alternating-descent' or nystrom_completion for large problems, or pass a "
            f"larger max_points to try anyway."
        )
    rows, cols = np.nonzero(np.triu(known, 1))
    if rows.size == 0:
        raise ValidationError(
            f"The 'mask' parameter of {OWNER} must mark at least one off-diagonal entry as "
            f"known. Got none instead."
        )
    scale = float(np.mean(np.abs(values[rows, cols]))) or 1.0
    target = values[rows, cols] / scale
    if solver == LOW_RANK:
        return _low_rank(rows, cols, target, scale, n_points, dim, rng, max_iter, tol, progress,
                         on_convergence)
    import cvxpy as cp

    operator = _edm_operator(rows, cols, n_points)
    G = cp.Variable((n_points, n_points), PSD=True)
    residual = operator @ cp.vec(G, order="F") - target
    count = rows.size
    misfit = {
        "frobenius": lambda r: cp.norm(r, 2) / np.sqrt(count),
        "squared": lambda r: cp.sum_squares(r) / count,
        "absolute": lambda r: cp.norm1(r) / count,
    }[fit](residual)
    problem = cp.Problem(cp.Minimize(misfit + trace_weight * cp.trace(G) / n_points),
                         [cp.sum(G, axis=0) == 0])
    settings: dict[str, Any]
    if solver == "SCS":
        settings = {"eps_abs": tol, "eps_rel": tol, "max_iters": max_iter}
    else:
        settings = {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol,
                    "max_iter": max_iter}
    try:
        with warnings.catch_warnings():  # replaced by the specific warning below
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            problem.solve(solver=solver, **settings)
    except cp.error.SolverError as exc:
        raise SolverError(f"{solver} failed on the SDR of {n_points} points: {exc}") from exc
    if G.value is None or problem.status not in ("optimal", "optimal_inaccurate"):
        raise SolverError(
            f"{solver} ended with status {problem.status!r} on the SDR of {n_points} points; "
            "try a positive trace_weight, fit='frobenius' or a larger max_iter."
        )
    if problem.status == "optimal_inaccurate":
        warnings.warn(
            f"{solver} stopped before reaching tol={tol} on the SDR of {n_points} points "
            f"(status 'optimal_inaccurate', {problem.solver_stats.num_iters} iterations); "
            "the estimate may be rough. Raise max_iter or loosen tol.",
            RuntimeWarning, stacklevel=2,
        )
    iterations = int(problem.solver_stats.num_iters or 0)
    if progress is not None:
        progress(iterations, float(problem.value))
    if on_convergence is not None:
        stop = ("converged" if problem.status == "optimal" else
                "budget" if iterations >= max_iter else "stalled")
        on_convergence(Convergence(stop, steps=iterations, budget=max_iter,
                                   history=(float(problem.value),)))
    gram = (G.value + G.value.T) / 2 * scale
    top, vectors = top_eigenpairs(gram, dim)
    return _points_edm(vectors * np.sqrt(np.maximum(top, 0.0)))


def choose_solver(n_points: int, *, misfit_options: bool = False) -> str:
    """The solver ``solver="auto"`` takes for ``n_points`` points (N = n + m).

    SCS, whose iterations each cost an N x N eigendecomposition, up to
    :data:`AUTO_LIMIT` points, where it finishes in seconds and, where the landmarks do not
    span the space, recovers more (module notes); the low-rank solver above. Options of the
    misfit form (``fit``, ``trace_weight``) ask for SCS whatever the size.

    Examples
    --------
    >>> choose_solver(150), choose_solver(1000), choose_solver(1000, misfit_options=True)
    ('SCS', 'burer-monteiro', 'SCS')
    """
    return "SCS" if misfit_options or n_points <= AUTO_LIMIT else LOW_RANK


def _low_rank(rows: np.ndarray, cols: np.ndarray, target: np.ndarray, scale: float,
              n_points: int, dim: int, rng: np.random.Generator, max_iter: int, tol: float,
              progress: Progress | None, on_convergence: Report | None) -> np.ndarray:
    """The ``"burer-monteiro"`` solve: warm start, factored solve, the EDM of the factor."""
    with blas_threads(None):  # thousands of small products: one BLAS thread is faster
        start = shortest_path_mds(rows, cols, target, n_points, dim, rng)
        solution = solve_low_rank(rows, cols, target, start, max_iter=max_iter, tol=tol,
                                  progress=progress)
    if on_convergence is not None:
        on_convergence(judge(solution.history, budget=max_iter, floor=tol,
                             stopped_early=solution.status == "stalled"))
    if solution.status != "converged":
        reason = ("the known distances fit no configuration in "
                  f"{dim} dimensions to that accuracy (noisy distances?); the closest fit found "
                  "is returned"
                  if solution.status == "stalled" else
                  f"after {max_iter} iterations; the estimate may be rough. Raise max_iter or "
                  "loosen tol")
        warnings.warn(
            f"{LOW_RANK} stopped at residual {solution.residual:.1e} short of tol={tol} on the "
            f"SDR of {n_points} points: {reason}.", RuntimeWarning, stacklevel=3)
    points = solution.factor - solution.factor.mean(axis=0)
    return _points_edm(points * np.sqrt(scale))


def _points_edm(points: np.ndarray) -> np.ndarray:
    """Squared distances between the rows of ``points``, exactly symmetric, zero diagonal."""
    norms = np.einsum("ij,ij->i", points, points)
    out = norms[:, None] + norms[None, :] - 2.0 * (points @ points.T)
    out = (out + out.T) / 2
    np.fill_diagonal(out, 0.0)
    return np.maximum(out, 0.0)


def _edm_operator(rows: np.ndarray, cols: np.ndarray, n_points: int) -> sp.csr_matrix:
    """Sparse map from column-major ``vec(G)`` to ``G_ii + G_jj - 2 G_ij`` per known pair.

    ``-2 G_ij`` is written as ``-G_ij - G_ji`` so the map is symmetric in G.
    """
    count = rows.size
    index = np.stack([rows * (n_points + 1), cols * (n_points + 1),
                      rows + cols * n_points, cols + rows * n_points], axis=1).ravel()
    weights = np.tile([1.0, 1.0, -1.0, -1.0], count)
    return sp.csr_matrix((weights, (np.repeat(np.arange(count), 4), index)),
                         shape=(count, n_points * n_points))
