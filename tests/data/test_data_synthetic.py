"""Generated datasets: FedCG's toy set and the make_classification wrapper."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.data import load, make_classification, make_fedcg_toy
from fedsec.errors import ValidationError


@pytest.fixture(scope="module")
def toy():
    return load("fedcg-toy")


def test_toy_has_6000_train_and_6000_test_rows(toy):
    train, test = toy.split(rng=0)
    assert (train.n_samples, test.n_samples) == (6000, 6000)
    np.testing.assert_array_equal(toy.test_rows, np.arange(6000, 12000))
    assert toy.task == "binary" and toy.describe()["n_test_rows"] == 6000


def test_toy_features_are_unit_scaled_plus_bias(toy):
    assert toy.feature_names == ("x1", "x2", "bias")
    assert toy.feature_groups == {"spatial": (0, 1), "bias": (2,)}
    spatial = toy.X[:, :2]
    assert spatial.min() == 0.0 and spatial.max() == 1.0
    np.testing.assert_array_equal(spatial.min(axis=0), [0.0, 0.0])
    np.testing.assert_array_equal(spatial.max(axis=0), [1.0, 1.0])
    assert np.all(toy.X[:, 2] == 1.0)


def test_toy_cohorts_are_three_hospitals_in_each_part(toy):
    train, test = toy.split(rng=0)
    for part in (train, test):
        np.testing.assert_array_equal(np.bincount(part.cohorts), [2000, 2000, 2000])
    positives = [train.y[train.cohorts == h].mean() for h in range(3)]
    assert max(positives) - min(positives) > 0.3  # hospitals differ (non-IID labels)


def test_toy_is_deterministic_in_its_seed(toy):
    again = make_fedcg_toy(seed=0)
    other = make_fedcg_toy(seed=1)
    np.testing.assert_array_equal(again.X, toy.X)
    np.testing.assert_array_equal(again.y, toy.y)
    assert not np.array_equal(other.X, toy.X)
    assert "seed=1" in other.notes


def test_toy_is_learnable_by_a_kernel_method_to_about_094(toy):
    from sklearn.svm import SVC

    train, test = toy.split(rng=0)
    accuracy = SVC(kernel="rbf", gamma=30.0, C=10.0).fit(train.X, train.y).score(test.X, test.y)
    assert 0.92 <= accuracy <= 0.96


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_toy_refuses_bad_seed(seed):
    with pytest.raises(ValidationError, match="'seed'"):
        load("fedcg-toy", seed=seed)


def test_classification_defaults():
    ds = load("classification")
    assert ds.X.shape == (1000, 20)
    assert ds.class_names == ("0", "1")
    assert ds.feature_groups == {"all": tuple(range(20))}


def test_classification_options_and_groups():
    ds = load("classification", n_samples=300, n_features=10, n_classes=3, n_groups=3, seed=4)
    assert ds.X.shape == (300, 10) and ds.task == "multiclass" and ds.n_classes == 3
    assert ds.feature_groups == {"g1": (0, 1, 2, 3), "g2": (4, 5, 6), "g3": (7, 8, 9)}


def test_classification_is_deterministic_in_its_seed():
    a = make_classification(n_samples=50, seed=7)
    b = make_classification(n_samples=50, seed=7)
    c = make_classification(n_samples=50, seed=8)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)


def test_classification_small_feature_counts_work():
    ds = make_classification(n_samples=40, n_features=2)
    assert ds.X.shape == (40, 2)


@pytest.mark.parametrize(
    ("options", "pattern"),
    [
        ({"n_informative": 21}, "'n_informative'"),
        ({"n_groups": 21}, "'n_groups'"),
        ({"n_classes": 1}, "'n_classes'"),
        ({"n_samples": 0}, "'n_samples'"),
        ({"n_features": 1, "n_classes": 3}, "inconsistent"),
    ],
)
def test_classification_refuses_bad_options(options, pattern):
    with pytest.raises(ValidationError, match=pattern):
        make_classification(**options)
