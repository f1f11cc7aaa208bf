"""The equality-constrained SDR in low-rank form (solver "burer-monteiro") against the truth
and against the convex misfit form solved by SCS."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.geometry import (
    classical_mds,
    edm,
    landmark_problem,
    procrustes_align,
    semidefinite_relaxation,
)
from fedsec.geometry.completers.sdr_low_rank import (
    augmented_lagrangian,
    constraint_residual,
    incidence,
    shortest_path_mds,
    smallest_dual_eigenpair,
    solve_low_rank,
)

BM = "burer-monteiro"


def pairs_of(problem):
    n_points = problem.D.shape[0]
    known = problem.mask & ~np.eye(n_points, dtype=bool)
    rows, cols = np.nonzero(np.triu(known, 1))
    return rows, cols, problem.D[rows, cols]


def test_recovers_the_true_points_up_to_a_rigid_motion():
    problem = landmark_problem(30, 8, rng=np.random.default_rng(4), dim=2)
    truth = np.vstack([problem.X, problem.W])

    D_hat = semidefinite_relaxation(problem.D, problem.mask, 2, rng=np.random.default_rng(0),
                                    solver=BM)

    aligned, _ = procrustes_align(classical_mds(D_hat, 2), truth)
    assert np.max(np.abs(aligned - truth)) < 1e-6
    assert problem.error(D_hat) < 1e-8


def test_agrees_with_the_convex_misfit_form_solved_by_scs():
    problem = landmark_problem(40, 10, rng=np.random.default_rng(0), dim=2)
    n = problem.X.shape[0]

    low_rank = semidefinite_relaxation(problem.D, problem.mask, 2,
                                       rng=np.random.default_rng(0), solver=BM)
    convex = semidefinite_relaxation(problem.D, problem.mask, 2, rng=np.random.default_rng(0),
                                     solver="SCS")

    gap = np.linalg.norm(low_rank[:n, :n] - convex[:n, :n]) / np.linalg.norm(convex[:n, :n])
    assert gap < 1e-2  # SCS stops at tol 1e-4 (error about 1e-4 on this instance)
    assert problem.error(low_rank) < problem.error(convex)


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    rows, cols = np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3])
    B = incidence(rows, cols, 4)
    target, multipliers = rng.random(4), rng.normal(size=4)
    Y = rng.normal(size=(4, 2))

    value, gradient = augmented_lagrangian(Y, B, B.T.tocsr(), target, multipliers, 3.0)

    step, numeric = 1e-6, np.zeros_like(Y)
    for index in np.ndindex(*Y.shape):
        shift = np.zeros_like(Y)
        shift[index] = step
        plus, _ = augmented_lagrangian(Y + shift, B, B.T.tocsr(), target, multipliers, 3.0)
        minus, _ = augmented_lagrangian(Y - shift, B, B.T.tocsr(), target, multipliers, 3.0)
        numeric[index] = (plus - minus) / (2 * step)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-8)
    residual = constraint_residual(Y, B, target)
    expected = (np.sum(Y * Y) / 4 - multipliers @ residual + 1.5 * residual @ residual)
    assert value == pytest.approx(expected)


def test_the_warm_start_is_exact_when_every_distance_is_known():
    points = np.random.default_rng(2).random((60, 3))
    rows, cols = np.triu_indices(60, 1)
    target = np.sum((points[rows] - points[cols]) ** 2, axis=1)

    start = shortest_path_mds(rows, cols, target, 60, 3, np.random.default_rng(0))

    np.testing.assert_allclose(edm(start), edm(points), atol=1e-9)


def test_inconsistent_distances_stall_and_warn():
    # An equilateral triangle has no embedding on a line.
    rows, cols = np.array([0, 0, 1]), np.array([1, 2, 2])
    start = np.array([[0.0], [0.5], [1.0]])

    solution = solve_low_rank(rows, cols, np.ones(3), start, max_iter=100, tol=1e-9)

    assert solution.status == "stalled" and solution.residual > 0.1
    with pytest.warns(RuntimeWarning, match="fit no configuration in 1 dimensions"):
        semidefinite_relaxation(1.0 - np.eye(3), np.ones((3, 3), bool), 1,
                                rng=np.random.default_rng(0), solver=BM)


def test_warns_when_stopped_at_max_iter():
    problem = landmark_problem(40, 10, rng=np.random.default_rng(0), dim=2)

    with pytest.warns(RuntimeWarning, match="Raise max_iter"):
        semidefinite_relaxation(problem.D, problem.mask, 2, rng=np.random.default_rng(0),
                                max_iter=1, solver=BM)


def test_reports_every_iteration():
    problem = landmark_problem(40, 10, rng=np.random.default_rng(0), dim=2)
    calls: list[tuple[int, float]] = []

    semidefinite_relaxation(problem.D, problem.mask, 2, rng=np.random.default_rng(0),
                            solver=BM,
                            progress=lambda iteration, value: calls.append((iteration, value)))

    assert [i for i, _ in calls] == list(range(1, len(calls) + 1))
    assert all(value > 0 for _, value in calls)


@pytest.mark.parametrize(("option", "value"), [("fit", "absolute"), ("trace_weight", 0.1)])
def test_misfit_options_are_refused_with_the_low_rank_solver(option, value):
    problem = landmark_problem(6, 4, rng=np.random.default_rng(0), dim=2)

    with pytest.raises(ValidationError, match=f"'{option}' parameter of semidefinite_relaxation "
                                              "must be None with solver='burer-monteiro'"):
        semidefinite_relaxation(problem.D, problem.mask, 2, rng=np.random.default_rng(0),
                                solver=BM, **{option: value})


def test_the_dual_certificate_proves_the_undetermined_answer_optimal():
    # Fewer landmarks than dimensions: many completions, the relaxation picks the least trace.
    problem = landmark_problem(30, 3, rng=np.random.default_rng(0), dim=6)
    rows, cols, target = pairs_of(problem)
    target = target / target.mean()
    start = shortest_path_mds(rows, cols, target, 33, 6, np.random.default_rng(0))

    solution = solve_low_rank(rows, cols, target, start, max_iter=200, tol=1e-9)
    value, vector = smallest_dual_eigenpair(incidence(rows, cols, 33), solution.multipliers,
                                            np.random.default_rng(0))

    assert solution.status == "converged"
    assert value * 33 > -1e-4  # S = I/N - L(lambda) is PSD: optimal for the convex program
    assert vector.shape == (33,)
    again = solve_low_rank(rows, cols, target, np.random.default_rng(5).normal(size=(33, 6)),
                           max_iter=200, tol=1e-9)  # another start, the same least trace
    assert np.sum(again.factor**2) == pytest.approx(np.sum(solution.factor**2), rel=1e-6)


def test_the_dual_eigenpair_matches_the_dense_solver():
    rng = np.random.default_rng(3)
    rows, cols = np.triu_indices(12, 1)
    B = incidence(rows, cols, 12)
    multipliers = rng.normal(size=rows.size)

    value, vector = smallest_dual_eigenpair(B, multipliers, np.random.default_rng(0))

    S = np.eye(12) / 12 - B.T.toarray() @ np.diag(multipliers) @ B.toarray()
    assert value == pytest.approx(np.linalg.eigvalsh(S)[0], abs=1e-8)
    np.testing.assert_allclose(S @ vector, value * vector, atol=1e-7)


def test_same_seed_gives_the_same_answer():
    problem = landmark_problem(30, 8, rng=np.random.default_rng(1), dim=2)

    def run() -> np.ndarray:
        return semidefinite_relaxation(problem.D, problem.mask, 2, rng=np.random.default_rng(7),
                                       solver=BM)

    assert np.array_equal(run(), run())
