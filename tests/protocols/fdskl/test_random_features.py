"""The maths under DSG and FDSKL: random features, losses, the bookkeeping of revisits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec import registry
from fedsec.errors import ValidationError
from fedsec.protocols.fdskl import dsg
from fedsec.protocols.fdskl import random_features as rf


@pytest.mark.parametrize(("kernel", "tol"), [("rbf", 0.02), ("laplace", 0.04)])
def test_random_features_approximate_the_kernel(kernel: str, tol: float) -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(12, 3))
    bank = rf.FeatureBank(b"s" * 32, 3, kernel=kernel, width=0.8, phase_material=b"p" * 32)
    n = 40_000
    Phi = rf.feature_map(X @ bank.directions(0, n).T + bank.phases(0, n))
    approx = Phi @ Phi.T / n
    exact = rf.exact_kernel(X, X, kernel=kernel, width=0.8)
    assert np.abs(approx - exact).max() < tol


def test_directions_depend_only_on_the_seed_and_the_index() -> None:
    a = rf.FeatureBank(b"s" * 32, 5, kernel="rbf", width=1.0)
    b = rf.FeatureBank(b"s" * 32, 5, kernel="rbf", width=1.0)
    whole = a.directions(0, 700)
    assert np.array_equal(np.vstack([b.directions(0, 10), b.directions(10, 700)]), whole)
    other = rf.FeatureBank(b"t" * 32, 5, kernel="rbf", width=1.0)
    assert not np.array_equal(other.directions(0, 700), whole)


@pytest.mark.parametrize("loss", rf.LOSSES)
@given(u=st.floats(-3, 3), positive=st.booleans())
@settings(max_examples=40, deadline=None)
def test_loss_derivative_matches_finite_differences(loss: str, u: float, positive: bool) -> None:
    y = 1.0 if positive else -1.0
    if loss == "smooth-hinge" and min(abs(y * u), abs(y * u - 1)) < 1e-3:
        return  # the derivative jumps at the kinks
    h = 1e-6
    numeric = (rf.loss_value(loss, np.array(u + h), np.array(y))
               - rf.loss_value(loss, np.array(u - h), np.array(y))) / (2 * h)
    assert rf.loss_derivative(loss)(u, y) == pytest.approx(float(numeric), abs=1e-5)


def test_scale_width_matches_scikit_learns_scale_gamma() -> None:
    X = np.random.default_rng(1).uniform(size=(50, 6))
    width = rf.scale_width(X.sum(), (X**2).sum(), X.size, X.shape[1])
    assert 1.0 / (2 * width**2) == pytest.approx(1.0 / (X.shape[1] * X.var()))


def test_bad_parameters_are_refused_with_the_standard_message() -> None:
    with pytest.raises(ValidationError) as info:
        dsg.DSGParams(kernel="poly")
    assert str(info.value) == ("The 'kernel' parameter of DSGParams must be one of 'rbf', "
                               "'laplace'. Got 'poly' instead.")
    with pytest.raises(ValidationError, match=r"'kernel' parameter of protocol 'dsg' .* 'poly'"):
        registry.get("protocol", "dsg")(kernel="poly")
    with pytest.raises(ValidationError, match="step \\* regularization < 1"):
        dsg.DSGParams(step=10.0, regularization=0.5)
    with pytest.raises(ValidationError, match=r"'n_iterations' parameter of DSGParams must be "
                                              r"an int >= 1\. Got 0 instead"):
        dsg.DSGParams(n_iterations=0)
    with pytest.raises(ValidationError, match="regression task needs the square loss"):
        dsg.signed_labels(np.zeros(3), "regression", "logistic")
    with pytest.raises(ValidationError, match="binary classification or regression"):
        dsg.signed_labels(np.zeros(3, dtype=int), "multiclass", "logistic")
