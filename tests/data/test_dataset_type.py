"""The Dataset value: validation, immutability, subset, split and describe."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fedsec.data import Dataset, Split
from fedsec.errors import DataError, ValidationError


def make(n=12, d=3, **fields):
    values = {
        "name": "toy",
        "X": np.arange(n * d, dtype=float).reshape(n, d),
        "y": np.arange(n) % 2,
        "task": "binary",
    }
    values.update(fields)
    return Dataset(**values)


def test_defaults_fill_names_groups_and_classes():
    ds = make()
    assert ds.feature_names == ("f1", "f2", "f3")
    assert ds.feature_groups == {"all": (0, 1, 2)}
    assert ds.class_names == ("0", "1")
    assert (ds.n_samples, ds.n_features, ds.n_classes) == (12, 3, 2)


def test_fields_are_keyword_only_and_frozen():
    with pytest.raises(TypeError):
        Dataset("toy", [[1.0]], [0], "binary")  # type: ignore[misc]
    ds = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.name = "other"  # type: ignore[misc]


def test_input_arrays_are_copied_and_stored_read_only():
    X = np.ones((4, 2))
    ds = make(n=4, d=2, X=X, y=[0, 1, 0, 1])
    X[0, 0] = 99.0
    assert ds.X[0, 0] == 1.0
    assert not ds.X.flags.writeable and not ds.y.flags.writeable


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_feature_is_refused_naming_the_column(bad):
    X = np.zeros((3, 2))
    X[1, 1] = bad
    with pytest.raises(DataError, match=r"column 'weight' \(first at row 1\)"):
        Dataset(name="toy", X=X, y=[0, 1, 0], task="binary", feature_names=("height", "weight"))


def test_non_finite_regression_target_is_refused():
    with pytest.raises(DataError, match="labels"):
        Dataset(name="toy", X=np.zeros((2, 1)), y=[0.5, np.nan], task="regression")


def test_regression_keeps_float_targets_and_has_no_classes():
    ds = Dataset(name="r", X=np.zeros((3, 1)), y=[0.5, 1.5, 2.0], task="regression")
    assert ds.y.dtype == np.float64 and ds.n_classes == 0
    assert ds.describe()["classes"] == {}


@pytest.mark.parametrize(
    ("fields", "error", "pattern"),
    [
        ({"X": np.zeros(12)}, DataError, "two-dimensional"),
        ({"X": np.array([["a"] * 3] * 12)}, DataError, "real numbers"),
        ({"y": np.zeros(5, dtype=int)}, DataError, "one label per row"),
        ({"y": np.full(12, 2)}, DataError, r"class codes in \[0, 1\]"),
        ({"y": np.full(12, 0.5)}, DataError, "integer class codes"),
        ({"task": "ranking"}, ValidationError, "'task'"),
        ({"feature_names": ("a", "b", "a")}, ValidationError, "repeated name.*'a'"),
        ({"feature_names": ("a", "b")}, ValidationError, "3 non-empty strings"),
        ({"class_names": ("x", "x")}, ValidationError, "repeated"),
        ({"class_names": ("a", "b", "c")}, ValidationError, "exactly 2"),
        ({"task": "multiclass", "class_names": ("a", "b")}, ValidationError, "at least 3"),
        ({"feature_groups": {"a": (0, 1), "b": (1, 2)}}, ValidationError, "exactly once"),
        ({"feature_groups": {"a": (0, 1)}}, ValidationError, "column 2 in 0 group"),
        ({"feature_groups": {"a": (0, 1, 2, 3)}}, ValidationError, "feature_groups"),
        ({"test_rows": [1, 1]}, ValidationError, "distinct"),
        ({"test_rows": [12]}, ValidationError, "row indices"),
        ({"cohorts": [0] * 11}, ValidationError, "cohort codes"),
        ({"cohorts": [-1] * 12}, ValidationError, "non-negative"),
        ({"name": ""}, ValidationError, "'name'"),
    ],
)
def test_inconsistent_fields_are_refused(fields, error, pattern):
    with pytest.raises(error, match=pattern):
        make(**fields)


def test_subset_keeps_metadata_and_carries_cohorts_and_test_rows():
    ds = make(cohorts=np.arange(12) // 4, test_rows=[8, 9, 10, 11],
              feature_groups={"a": (0,), "b": (1, 2)})

    sub = ds.subset([9, 0, 5, 11])

    np.testing.assert_array_equal(sub.X, ds.X[[9, 0, 5, 11]])
    np.testing.assert_array_equal(sub.cohorts, [2, 0, 1, 2])
    np.testing.assert_array_equal(sub.test_rows, [0, 3])
    assert sub.feature_groups == ds.feature_groups and sub.class_names == ds.class_names
    assert ds.subset(np.arange(12) < 3).n_samples == 3
    assert ds.subset([0, 1]).test_rows is None


@pytest.mark.parametrize("rows", [[12], [-1], [[0, 1]], np.ones(5, dtype=bool), [0.5]])
def test_subset_refuses_bad_rows(rows):
    with pytest.raises(ValidationError, match="'rows'"):
        make().subset(rows)


def test_split_uses_predefined_test_rows_and_ignores_test_size():
    ds = make(test_rows=[3, 7], cohorts=np.arange(12) % 3)

    train, test = ds.split(test_size=0.5, rng=0)

    np.testing.assert_array_equal(test.X, ds.X[[3, 7]])
    assert train.n_samples == 10
    assert train.test_rows is None and test.test_rows is None
    np.testing.assert_array_equal(test.cohorts, [0, 1])


def test_split_accepts_generator_and_seed_alike():
    ds = make(n=40, y=np.arange(40) % 4, task="multiclass")
    a = ds.split(rng=np.random.default_rng(5))
    b = ds.split(rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.test.X, b.test.X)
    assert a.test.n_samples == 10


@pytest.mark.parametrize("rng", [None, True, -1, 1.5, "seed"])
def test_split_refuses_bad_rng(rng):
    with pytest.raises(ValidationError, match="'rng'"):
        make().split(rng=rng)


@pytest.mark.parametrize("size", [0, 1.0, 0.0, -0.2, 12, True, "half"])
def test_split_refuses_bad_test_size(size):
    with pytest.raises(ValidationError, match="test_size"):
        make().split(test_size=size, rng=0)


def test_split_that_cannot_be_stratified_says_how_to_proceed():
    ds = make(n=6, y=[0, 0, 0, 0, 0, 1])
    with pytest.raises(DataError, match="stratify=False"):
        ds.split(test_size=0.5, rng=0)
    assert ds.split(test_size=0.5, rng=0, stratify=False).test.n_samples == 3


def test_regression_split_is_not_stratified():
    ds = Dataset(name="r", X=np.zeros((10, 1)), y=np.linspace(0, 1, 10), task="regression")
    assert ds.split(test_size=0.3, rng=1).test.n_samples == 3


@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.integers(min_value=2, max_value=30), min_size=2, max_size=5),
    test_size=st.floats(min_value=0.2, max_value=0.8),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_split_is_a_stratified_partition_and_reproducible(counts, test_size, seed):
    y = np.repeat(np.arange(len(counts)), counts)
    n = y.size
    n_test = math.ceil(test_size * n)
    assume(min(n_test, n - n_test) >= len(counts))  # room for every class on both sides
    ds = Dataset(name="p", X=np.arange(n, dtype=float)[:, None], y=y,
                 task="binary" if len(counts) == 2 else "multiclass")

    train, test = ds.split(test_size=test_size, rng=seed)
    again = ds.split(test_size=test_size, rng=seed)

    rows = np.concatenate([train.X[:, 0], test.X[:, 0]]).astype(int)
    assert sorted(rows.tolist()) == list(range(n))
    np.testing.assert_array_equal(again.test.X, test.X)
    expected = np.asarray(counts) * test.n_samples / n
    assert np.all(np.abs(np.bincount(test.y, minlength=len(counts)) - expected) <= 1 + 1e-9)


def test_split_parts_must_agree():
    a = make()
    b = make(feature_names=("x", "y", "z"))
    with pytest.raises(ValidationError, match="feature_names"):
        Split(train=a, test=b)
    with pytest.raises(ValidationError, match="'test'"):
        Split(train=a, test="b")


def test_describe_is_json_serialisable_summary():
    ds = make(feature_groups={"a": (0,), "b": (1, 2)}, cohorts=np.arange(12) % 3,
              test_rows=[0, 1], source="made up", notes="nothing changed")

    summary = ds.describe()

    assert json.loads(json.dumps(summary)) == summary
    assert summary == {
        "name": "toy", "n_samples": 12, "n_features": 3, "task": "binary",
        "classes": {"0": 6, "1": 6}, "groups": {"a": 1, "b": 2}, "n_test_rows": 2,
        "n_cohorts": 3, "source": "made up", "notes": "nothing changed",
    }
