"""Bad inputs to the completion methods are refused with the project's message format."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import DataError, UnknownNameError, ValidationError
from fedsec.geometry import (
    METHODS,
    alternating_descent,
    assemble_edm,
    complete,
    optspace,
    rank_alternation,
    semidefinite_relaxation,
    soft_impute,
    squared_distances,
)

FUNCTIONS = {
    "alternating_descent": alternating_descent,
    "rank_alternation": rank_alternation,
    "semidefinite_relaxation": semidefinite_relaxation,
    "optspace": optspace,
    "soft_impute": soft_impute,
}


def small_problem() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X, W = rng.random((6, 2)), rng.random((4, 2))
    return assemble_edm(None, squared_distances(X, W), squared_distances(W))


def test_unknown_method_lists_the_valid_names():
    D, mask = small_problem()

    with pytest.raises(UnknownNameError) as caught:
        complete(D, mask, 2, "gradient-magic", rng=np.random.default_rng(0))

    message = str(caught.value)
    assert "Unknown completion method 'gradient-magic'" in message
    assert all(name in message for name in METHODS)
    assert isinstance(caught.value, KeyError)


def test_unknown_option_names_the_method_and_its_options():
    D, mask = small_problem()

    with pytest.raises(ValidationError, match=r"'options' parameter of complete \(method "
                                              r"'soft-impute'\) must be keywords among .*"
                                              r"'shrinkage'.*Got 'lambda_' instead"):
        complete(D, mask, 2, "soft-impute", rng=np.random.default_rng(0), lambda_=0.1)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_non_square_matrix_is_refused(name):
    with pytest.raises(ValidationError, match=f"'D' parameter of {name} must be a square "
                                              r"2-D array. Got an array of shape \(3, 4\)"):
        FUNCTIONS[name](np.zeros((3, 4)), np.ones((3, 4), bool), 2,
                        rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_asymmetric_mask_is_refused(name):
    D, mask = small_problem()
    mask[0, 7] = not mask[7, 0]

    with pytest.raises(ValidationError, match=f"'mask' parameter of {name} must be symmetric"):
        FUNCTIONS[name](D, mask, 2, rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_nan_in_a_known_entry_is_refused(name):
    D, mask = small_problem()
    D[2, 8] = D[8, 2] = np.nan

    with pytest.raises(DataError, match=f"'D' parameter of {name} must be finite on the known "
                                        r"entries \(mask True\). Got nan at row 2, column 8"):
        FUNCTIONS[name](D, mask, 2, rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dim", [0, -1, 2.0, True])
def test_bad_dim_is_refused(name, dim):
    D, mask = small_problem()

    with pytest.raises(ValidationError, match=f"'dim' parameter of {name} must be an int"):
        FUNCTIONS[name](D, mask, dim, rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_mask_of_the_wrong_shape_is_refused(name):
    D, _ = small_problem()

    with pytest.raises(ValidationError, match=f"'mask' parameter of {name}"):
        FUNCTIONS[name](D, np.ones((3, 3), bool), 2, rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_non_binary_mask_is_refused(name):
    D, mask = small_problem()

    with pytest.raises(ValidationError, match="boolean"):
        FUNCTIONS[name](D, mask * 2.5, 2, rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_asymmetric_known_values_are_refused(name):
    D, mask = small_problem()
    D[1, 9] += 0.5

    with pytest.raises(ValidationError, match=r"symmetric on the known entries \(use \(D \+ "):
        FUNCTIONS[name](D, mask, 2, rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("rng", [0, None, np.random.RandomState(0)])
def test_rng_must_be_a_generator(name, rng):
    D, mask = small_problem()

    with pytest.raises(ValidationError, match=f"'rng' parameter of {name} must be a numpy"):
        FUNCTIONS[name](D, mask, 2, rng=rng)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_progress_must_be_callable(name):
    D, mask = small_problem()

    with pytest.raises(ValidationError, match=f"'progress' parameter of {name}"):
        FUNCTIONS[name](D, mask, 2, rng=np.random.default_rng(0), progress="print")


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize(("option", "value"), [("max_iter", 0), ("tol", -1.0)])
def test_loop_settings_are_checked(name, option, value):
    D, mask = small_problem()

    with pytest.raises(ValidationError, match=f"'{option}' parameter of {name}"):
        FUNCTIONS[name](D, mask, 2, rng=np.random.default_rng(0), **{option: value})


def test_sdr_refuses_hopeless_sizes_and_says_what_to_do():
    D, mask = small_problem()

    with pytest.raises(ValidationError) as caught:
        semidefinite_relaxation(D, mask, 2, rng=np.random.default_rng(0), max_points=5)

    message = str(caught.value)
    assert "at most 5 points" in message and "Got 10 points" in message
    assert "alternating-descent" in message and "max_points" in message


@pytest.mark.parametrize(("solver", "limit"), [("SCS", 1000), ("CLARABEL", 1000),
                                              ("burer-monteiro", 5000)])
def test_sdr_default_limit_depends_on_the_solver(solver, limit):
    size = limit + 1
    mask = np.eye(size, dtype=bool)

    with pytest.raises(ValidationError, match=f"at most {limit} points"):
        semidefinite_relaxation(np.zeros((size, size)), mask, 2, rng=np.random.default_rng(0),
                                solver=solver)


def test_alternating_descent_checks_its_start():
    D, mask = small_problem()

    with pytest.raises(ValidationError, match=r"'init' parameter of alternating_descent must be "
                                              r"an array of shape \(10, 2\)"):
        alternating_descent(D, mask, 2, rng=np.random.default_rng(0), init=np.zeros((10, 3)))
    with pytest.raises(ValidationError, match="'init' parameter of alternating_descent must be "
                                              "one of"):
        alternating_descent(D, mask, 2, rng=np.random.default_rng(0), init="mds")
