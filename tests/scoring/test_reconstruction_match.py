"""Matching reconstructions to true samples: exact, permuted, random, variable-length."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedsec.errors import ValidationError
from fedsec.scoring.reconstruction_match import match_reconstructions, valid_mask

KEYS = {"mse", "correlation", "label_accuracy", "nearest_rate", "baseline_mse",
        "baseline_correlation", "baseline_label_accuracy", "baseline_nearest_rate",
        "n_matched"}


def population(n: int = 200, classes: int = 4, shape: tuple[int, ...] = (6, 3), seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray]:
    """Samples around one pattern per class, labels balanced."""
    rng = np.random.default_rng(seed)
    centres = 2.0 * rng.standard_normal((classes, *shape))
    y = np.arange(n) % classes
    return centres[y] + rng.standard_normal((n, *shape)), y


def test_the_truth_itself_scores_perfectly() -> None:
    X, y = population()
    truth, labels = X[:8], y[:8]
    scores = match_reconstructions(truth, truth, recon_labels=labels, true_labels=labels,
                                   pool=X, pool_labels=y)
    assert set(scores) == KEYS and all(isinstance(v, float) for v in scores.values())
    assert scores["mse"] == pytest.approx(0.0, abs=1e-12)
    assert scores["correlation"] == pytest.approx(1.0)
    assert scores["nearest_rate"] == 1.0 and scores["label_accuracy"] == 1.0
    assert scores["n_matched"] == 8.0
    assert scores["baseline_mse"] > 0.5  # the within-class variance is 1


def test_a_permuted_reconstruction_scores_the_same_after_matching() -> None:
    X, y = population()
    truth, labels = X[:8], y[:8]
    order = np.random.default_rng(1).permutation(8)
    probs = np.eye(4)[labels[order]]  # label probabilities are accepted too
    scores = match_reconstructions(truth[order], truth, recon_labels=probs, true_labels=labels,
                                   pool=X, pool_labels=y)
    assert scores["mse"] == pytest.approx(0.0, abs=1e-12)
    assert scores["correlation"] == pytest.approx(1.0)
    assert scores["nearest_rate"] == 1.0 and scores["label_accuracy"] == 1.0


def test_reconstructions_that_know_nothing_score_no_better_than_the_prior() -> None:
    """Other samples of the population, or noise: no better than the class-mean guess."""
    X, y = population()
    truth, labels = X[:8], y[:8]
    for recon in (X[100:108], np.random.default_rng(2).standard_normal(truth.shape)):
        scores = match_reconstructions(recon, truth, true_labels=labels, pool=X,
                                       pool_labels=y)
        assert scores["mse"] > scores["baseline_mse"]
        assert scores["correlation"] <= scores["baseline_correlation"]
        assert scores["nearest_rate"] <= max(scores["baseline_nearest_rate"], 0.125)
        assert math.isnan(scores["label_accuracy"])


def test_a_noisy_reconstruction_sits_between_the_truth_and_the_prior() -> None:
    X, y = population()
    truth = X[:8]
    recon = truth + 0.3 * np.random.default_rng(3).standard_normal(truth.shape)
    scores = match_reconstructions(recon, truth, true_labels=y[:8], pool=X, pool_labels=y)
    assert scores["mse"] == pytest.approx(0.09, rel=0.35)
    assert scores["mse"] < scores["baseline_mse"]
    assert scores["nearest_rate"] == 1.0 > scores["baseline_nearest_rate"]


def test_the_baseline_uses_class_means_of_the_others_or_of_the_truth() -> None:
    truth = np.array([[0.0, 0.0], [2.0, 2.0], [10.0, 10.0]])
    labels = np.array([0, 0, 1])
    alone = match_reconstructions(truth, truth, true_labels=labels)
    # class 0's mean is (1, 1): squared error 1 for both members; class 1 is its own mean
    assert alone["baseline_mse"] == pytest.approx(2 / 3)
    pool = np.vstack([truth, [[1.0, 1.0]] * 3, [[12.0, 12.0]]])
    pool_labels = np.array([0, 0, 1, 0, 0, 0, 1])
    pooled = match_reconstructions(truth, truth, true_labels=labels, pool=pool,
                                   pool_labels=pool_labels)
    # the prior comes from the pool's other rows: class 0's mean (1, 1), class 1's (12, 12)
    assert pooled["baseline_mse"] == pytest.approx((1 + 1 + 4) / 3)
    assert pooled["baseline_label_accuracy"] == pytest.approx(2 / 3)
    unlabelled = match_reconstructions(truth, truth)
    mean = truth.mean(axis=0)
    assert unlabelled["baseline_mse"] == pytest.approx(np.mean((truth - mean) ** 2))


def test_only_the_steps_within_each_length_are_compared() -> None:
    rng = np.random.default_rng(4)
    truth = rng.standard_normal((5, 7, 2))
    lengths = np.array([7, 3, 5, 1, 6])
    recon = truth.copy()
    for i, length in enumerate(lengths):
        recon[i, length:] = 100.0  # garbage in the padding
        truth[i, length:] = 0.0
    scores = match_reconstructions(recon[::-1], truth, lengths=lengths)
    assert scores["mse"] == pytest.approx(0.0, abs=1e-12)
    assert scores["nearest_rate"] == 1.0
    assert valid_mask(truth.shape, lengths).sum() == 2 * lengths.sum()
    with pytest.raises(ValidationError):
        match_reconstructions(recon, truth, lengths=np.array([8, 1, 1, 1, 1]))


def test_more_or_fewer_reconstructions_than_samples() -> None:
    X, _ = population()
    fewer = match_reconstructions(X[[3, 1]], X[:6])
    assert fewer["n_matched"] == 2.0 and fewer["mse"] == pytest.approx(0.0, abs=1e-12)
    more = match_reconstructions(X[:6], X[:2])
    assert more["n_matched"] == 2.0 and more["mse"] == pytest.approx(0.0, abs=1e-12)


def test_a_pool_that_does_not_begin_with_the_truth_is_refused() -> None:
    X, y = population()
    with pytest.raises(ValidationError, match="first rows"):
        match_reconstructions(X[:4], X[:4], pool=X[1:])
    with pytest.raises(ValidationError, match="labels"):
        match_reconstructions(X[:4], X[:4], true_labels=y[:4], pool=X)
    with pytest.raises(ValidationError, match="shape"):
        match_reconstructions(X[:4, :2], X[:4])


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 4), st.integers(1, 3)),
              elements=st.floats(-10, 10, allow_nan=False, width=32)),
       st.integers(0, 2**32 - 1))
def test_scores_do_not_depend_on_the_order_of_the_reconstructions(truth: np.ndarray,
                                                                  seed: int) -> None:
    # samples that coincide make the optimal matching a tie, which any order may break
    flat = truth.reshape(len(truth), -1)
    assume(all(np.abs(flat[i] - flat[j]).max() > 1e-6
               for i in range(len(flat)) for j in range(i)))
    rng = np.random.default_rng(seed)
    recon = truth + rng.standard_normal(truth.shape)
    labels = rng.integers(0, 2, truth.shape[0])
    order = rng.permutation(truth.shape[0])
    a = match_reconstructions(recon, truth, recon_labels=labels, true_labels=labels)
    b = match_reconstructions(recon[order], truth, recon_labels=labels[order],
                              true_labels=labels)
    for key in ("mse", "correlation", "n_matched"):
        assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-9)


def test_few_uninformed_reconstructions_among_many_samples_stay_at_the_baseline() -> None:
    """Matching 64 guesses to 300 samples picks each one's nearest sample whatever it holds:
    the raw nearest rate of noise is far from 0, and its baseline says so."""
    width = population()[0].shape[1]
    rng = np.random.default_rng(7)
    data = rng.standard_normal((600, width))
    labels = rng.integers(0, 2, 600)
    noise = rng.standard_normal((64, width))
    scores = match_reconstructions(noise, data[:300], true_labels=labels[:300], pool=data,
                                   pool_labels=labels)
    assert scores["nearest_rate"] > 0.2
    assert abs(scores["nearest_rate"] - scores["baseline_nearest_rate"]) < 0.15
