"""Scalers are fitted on training rows only and never divide by zero."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedsec.data import Dataset, Scaler, fit_scaler, load
from fedsec.errors import DataError, ValidationError

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
matrices = st.integers(min_value=1, max_value=20).flatmap(
    lambda n: arrays(np.float64, (n, 3), elements=finite)
)


@settings(max_examples=100, deadline=None)
@given(X=matrices)
def test_minmax_maps_training_rows_onto_unit_interval_exactly(X):
    scaled = fit_scaler(X, "minmax").transform(X)

    assert np.all(scaled >= 0.0) and np.all(scaled <= 1.0)
    varying = X.max(axis=0) > X.min(axis=0)
    assert np.all(scaled.min(axis=0)[varying] == 0.0)
    assert np.all(scaled.max(axis=0)[varying] == 1.0)
    assert np.all(scaled[:, ~varying] == 0.0)


@settings(max_examples=100, deadline=None)
@given(X=matrices)
@example(X=np.array([[5e-324, 0.0, 0.0], [0.0, 0.0, 0.0]]))  # a subnormal range: no mean exists
def test_standard_centres_and_never_divides_by_zero(X):
    scaled = fit_scaler(X, "standard").transform(X)

    assert np.all(np.isfinite(scaled))
    np.testing.assert_allclose(scaled.mean(axis=0), 0.0, atol=1e-6)
    assert np.all(scaled.std(axis=0) <= 1.0 + 1e-9)


@settings(max_examples=50, deadline=None)
@given(X=matrices, method=st.sampled_from(["minmax", "standard", "none"]))
def test_inverse_transform_undoes_transform(X, method):
    scaler = fit_scaler(X, method)
    np.testing.assert_allclose(scaler.inverse_transform(scaler.transform(X)), X,
                               rtol=1e-9, atol=1e-6)


def test_none_is_the_identity_on_a_copy():
    X = np.array([[1.0, -2.0], [3.0, 4.0]])
    out = fit_scaler(X, "none").transform(X)
    np.testing.assert_array_equal(out, X)
    assert out is not X


def test_constant_column_is_mapped_to_zero():
    X = np.array([[5.0, 0.0], [5.0, 2.0], [5.0, 4.0]])
    for method in ("minmax", "standard"):
        scaler = fit_scaler(X, method)
        assert scaler.scale_[0] == 1.0
        np.testing.assert_array_equal(scaler.transform(X)[:, 0], 0.0)


def test_split_scaling_is_fitted_on_train_only():
    parts = load("sonar").split(test_size=0.3, rng=3)

    scaled = parts.scaled("minmax")

    expected = fit_scaler(parts.train.X, "minmax").transform(parts.test.X)
    np.testing.assert_array_equal(scaled.test.X, expected)
    assert scaled.train.X.min() == 0.0 and scaled.train.X.max() == 1.0
    np.testing.assert_array_equal(scaled.train.y, parts.train.y)
    assert scaled.train.feature_names == parts.train.feature_names
    assert not scaled.test.X.flags.writeable


def test_scaling_keeps_cohorts_and_groups():
    ds = Dataset(name="c", X=np.arange(20.0).reshape(10, 2), y=np.arange(10) % 2,
                 task="binary", cohorts=np.arange(10) % 2,
                 feature_groups={"a": (0,), "b": (1,)})
    train, _ = ds.split(test_size=0.4, rng=0).scaled("standard")
    assert train.cohorts is not None and train.feature_groups == ds.feature_groups


def test_bad_method_and_shapes_are_refused():
    with pytest.raises(ValidationError, match="'method'"):
        fit_scaler(np.zeros((2, 2)), "robust")  # type: ignore[arg-type]
    with pytest.raises(DataError, match="at least one row"):
        fit_scaler(np.zeros((0, 2)), "minmax")
    with pytest.raises(DataError, match="NaN"):
        fit_scaler(np.array([[np.nan]]), "minmax")
    with pytest.raises(DataError, match=r"shape \(n, 2\)"):
        fit_scaler(np.zeros((2, 2)), "minmax").transform(np.zeros((2, 3)))
    with pytest.raises(ValidationError, match="positive"):
        Scaler(method="minmax", offset_=np.zeros(1), scale_=np.zeros(1))
