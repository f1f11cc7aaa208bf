"""No scorer certifies a leak that an uninformed estimate of the right shape would show: a
random guess, the mean, or a random subspace scores at (or below) its baseline. (Scorers with
their own such tests: ``matched-rows`` in test_matched_rows.py, ``pixel-recovery`` in
tests/attacks/fedgraph, ``sequence-match`` in test_reconstruction_match.py, ``label-counts``
in tests/attacks/fedmv/test_update_labels.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.outcomes import Reconstruction
from fedsec.registry import create

KEY = "party/a/shard/cell0/X"


def truth(seed: int = 0, n: int = 80, d: int = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + rng.normal(size=d)


def scored(scorer: str, estimate: np.ndarray, baseline: np.ndarray, X: np.ndarray,
           **params: object) -> dict:
    rec = Reconstruction(attack="demo", threat="x", estimates={KEY: estimate},
                         baseline={KEY: baseline})
    return create("scorer", scorer, params).score(rec, {KEY: X})


def mean_rows(X: np.ndarray) -> np.ndarray:
    return np.repeat(X.mean(axis=0, keepdims=True), len(X), axis=0)


def random_like(X: np.ndarray, seed: int) -> np.ndarray:
    """Rows drawn independently with the truth's own mean and spread: shape, no information."""
    rng = np.random.default_rng([seed, 1])  # not the truth's stream
    return X.mean(axis=0) + rng.normal(size=X.shape) * X.std(axis=0)


@pytest.mark.parametrize("scorer", ["reconstruction-error", "feature-recovery",
                                    "point-recovery"])
def test_a_random_guess_of_the_right_spread_gains_nothing_over_the_mean(scorer: str) -> None:
    X = truth()
    for seed in range(5):
        result = scored(scorer, random_like(X, seed), mean_rows(X), X)
        assert result["advantage"] <= 0.0, (scorer, seed, result["advantage"])


@pytest.mark.parametrize("scorer", ["reconstruction-error", "feature-recovery",
                                    "point-recovery"])
def test_the_mean_itself_scores_exactly_at_the_baseline(scorer: str) -> None:
    X = truth()
    result = scored(scorer, mean_rows(X), mean_rows(X), X)
    assert result["advantage"] == pytest.approx(0.0, abs=1e-12)
    assert result["fraction_recovered"] == 0.0  # and recovers no row


def test_a_random_guess_passes_the_epsilon_dr_check_like_the_mean() -> None:
    X = truth()
    for seed in range(5):
        result = scored("epsilon-dr", random_like(X, seed), mean_rows(X), X, epsilon=0.1)
        assert result["passed"]
        assert result["fraction_violating"] == result["baseline_fraction_violating"] == 0.0
    assert not scored("epsilon-dr", X, mean_rows(X), X, epsilon=0.1)["passed"]  # exact fails


def test_a_random_subspace_captures_what_the_random_baseline_does() -> None:
    X = truth(n=60, d=4)  # a rank-4 block in R^60
    gains = []
    for seed in range(20):
        basis, _ = np.linalg.qr(np.random.default_rng(seed + 1).normal(size=(60, 4)))
        result = scored("column-space", basis, basis, X)
        gains.append(result["advantage"])
    assert abs(float(np.mean(gains))) < 0.05  # a random span closes none of the gap


def test_random_binary_columns_recover_nothing() -> None:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(80, 5)).astype(float)
    guess = rng.integers(0, 2, size=(80, 5)).astype(float)
    result = scored("binary-columns", guess, guess, X)
    assert result["recovered"] == 0.0 and result["spurious"] == 5
