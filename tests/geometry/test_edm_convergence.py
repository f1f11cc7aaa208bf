"""How each completer says it ended (fedsec.convergence), and SDR's solver chosen by size."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.convergence import STOPS, Convergence
from fedsec.errors import ValidationError
from fedsec.geometry import METHODS, complete, landmark_problem, semidefinite_relaxation
from fedsec.geometry.completers.sdr import AUTO_LIMIT, choose_solver

SIZES = {"soft-impute": 20}  # landmarks per method (Soft-Impute needs many to do anything)


def records_of(method, problem, **options):
    records: list[Convergence] = []
    out = complete(problem.D, problem.mask, 2, method, rng=np.random.default_rng(0),
                   on_convergence=records.append, **options)
    return out, records


@pytest.mark.filterwarnings("ignore:SCS stopped before:RuntimeWarning")
@pytest.mark.parametrize("method", METHODS)
def test_every_completer_reports_once_without_changing_its_answer(method):
    problem = landmark_problem(30, SIZES.get(method, 6), rng=np.random.default_rng(0))

    out, records = records_of(method, problem)
    plain = complete(problem.D, problem.mask, 2, method, rng=np.random.default_rng(0))

    assert len(records) == 1 and records[0].stopped in STOPS
    assert records[0].history and records[0].steps >= 1
    np.testing.assert_array_equal(out, plain)


@pytest.mark.parametrize("method", ["alternating-descent", "optspace"])
def test_a_determined_problem_converges(method):
    problem = landmark_problem(30, 6, rng=np.random.default_rng(1))

    _, (record,) = records_of(method, problem)

    assert record.stopped == "converged" and record.steps < record.budget


def test_a_run_cut_short_says_more_budget_would_help():
    problem = landmark_problem(30, 6, rng=np.random.default_rng(1))

    _, (record,) = records_of("alternating-descent", problem, max_iter=3, init="zeros")

    assert record.stopped == "budget" and record.more_budget_helps and record.steps == 3


@pytest.mark.filterwarnings("ignore:SCS stopped before:RuntimeWarning")
def test_scs_cut_short_reports_its_budget():
    problem = landmark_problem(20, 5, rng=np.random.default_rng(0))

    _, (record,) = records_of("sdr", problem, max_iter=5, solver="SCS")

    assert record.stopped == "budget" and record.budget == 5


def test_low_rank_sdr_reports_its_residual_history():
    problem = landmark_problem(30, 8, rng=np.random.default_rng(4))

    _, (record,) = records_of("sdr", problem, solver="burer-monteiro")

    assert record.stopped == "converged" and record.history[-1] <= 1e-9


def test_on_convergence_must_be_callable():
    problem = landmark_problem(10, 4, rng=np.random.default_rng(0))

    with pytest.raises(ValidationError, match="'on_convergence' parameter of rank_alternation"):
        complete(problem.D, problem.mask, 2, "rank-alternation", rng=np.random.default_rng(0),
                 on_convergence="print")


def test_auto_takes_scs_up_to_the_limit_and_the_low_rank_solver_above():
    assert choose_solver(AUTO_LIMIT) == "SCS"
    assert choose_solver(AUTO_LIMIT + 1) == "burer-monteiro"
    assert choose_solver(AUTO_LIMIT + 1, misfit_options=True) == "SCS"


def test_auto_is_the_default_and_gives_the_chosen_solvers_answer():
    small = landmark_problem(20, 5, rng=np.random.default_rng(0))
    large = landmark_problem(AUTO_LIMIT + 1 - 10, 10, rng=np.random.default_rng(0))

    for problem, chosen in ((small, "SCS"), (large, "burer-monteiro")):
        default = semidefinite_relaxation(problem.D, problem.mask, 2,
                                          rng=np.random.default_rng(0))
        named = semidefinite_relaxation(problem.D, problem.mask, 2,
                                        rng=np.random.default_rng(0), solver=chosen)
        np.testing.assert_array_equal(default, named)
    assert large.error(default) < 1e-8


def test_auto_with_a_misfit_option_solves_the_misfit_form():
    problem = landmark_problem(20, 5, rng=np.random.default_rng(0))

    out = semidefinite_relaxation(problem.D, problem.mask, 2, rng=np.random.default_rng(0),
                                  fit="absolute")
    scs = semidefinite_relaxation(problem.D, problem.mask, 2, rng=np.random.default_rng(0),
                                  solver="SCS", fit="absolute")

    np.testing.assert_array_equal(out, scs)
