"""RRLS maths against direct references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.errors import ValidationError
from fedsec.protocols.fedcg import krls


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 10_000))
def test_kernel_factorises_over_feature_groups(n_groups: int, width: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = n_groups * width
    X, W = rng.random((7, d)), rng.random((4, d))
    groups = np.array_split(np.arange(d), n_groups)
    gamma = rng.uniform(0.1, 3.0, size=4)
    full = krls.rbf_block(X, W, gamma)
    np.testing.assert_allclose(krls.hadamard(krls.group_blocks(X, W, groups, gamma)), full,
                               rtol=1e-12)
    direct = np.exp(-gamma[None, :] * ((X[:, None, :] - W[None]) ** 2).sum(-1))
    np.testing.assert_allclose(full, direct, rtol=1e-12)


def test_conjugate_gradient_matches_a_direct_solve() -> None:
    rng = np.random.default_rng(0)
    K = rng.random((60, 12))
    Y = krls.label_matrix(rng.integers(0, 3, 60), 3)
    lam = 1e-2
    A = K.T @ K + lam * np.eye(12)
    alpha0 = rng.normal(size=(12, 3))
    result = krls.conjugate_gradient(lambda P, e: A @ P, K.T @ Y - A @ alpha0, alpha0,
                                     tol=1e-28, max_epochs=200)
    np.testing.assert_allclose(result.alpha, np.linalg.solve(A, K.T @ Y), rtol=1e-9)
    assert result.converged and result.epochs <= 40


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1e-10, 1e-16, 1e-24]))
def test_stop_bounds_hold_for_solutions_that_met_the_rule(seed: int, tol: float) -> None:
    """CG run in two summation orders (rows shuffled, so K^T K sums differently), each to the
    same stopping rule: they lie within the bound from each other, and the bound is not
    vacuous (an ill-conditioned system, far from the exact solution's rounding)."""
    rng = np.random.default_rng(seed)
    K = np.exp(-rng.random((80, 15)) * 8.0)  # kernel-like: close columns, condition ~1e6+
    Y = krls.label_matrix(rng.integers(0, 2, 80), 2)
    lam = 1e-3
    alpha0 = rng.normal(size=(15, 1))
    order = rng.permutation(80)

    def cg(K: np.ndarray, Y: np.ndarray) -> np.ndarray:
        A = K.T @ K + lam * np.eye(15)
        r0 = K.T @ Y - A @ alpha0
        result = krls.conjugate_gradient(
            lambda P, e: K.T @ (K @ P) + lam * P, r0, alpha0,
            tol=tol * float((r0 * r0).sum(axis=0).max()), max_epochs=2000)
        assert result.converged
        return result.alpha

    one, two = cg(K, Y), cg(K[order], Y[order])
    K_test = np.exp(-rng.random((20, 15)) * 8.0)
    bound_alpha, bound_scores = krls.stop_bounds(K, lam, Y, alpha0, one, tol, K_test)
    assert np.abs(one - two).max() / np.abs(one).max() <= bound_alpha
    assert (np.abs(K_test @ (one - two)).max() / np.abs(K_test @ one).max()) <= bound_scores
    assert bound_alpha < 1.0 and bound_scores < 1.0


def test_stop_bounds_grow_with_the_tolerance() -> None:
    rng = np.random.default_rng(3)
    K, Y = rng.random((40, 8)), krls.label_matrix(rng.integers(0, 2, 40), 2)
    alpha = np.linalg.solve(K.T @ K + 0.1 * np.eye(8), K.T @ Y)
    loose = krls.stop_bounds(K, 0.1, Y, np.zeros((8, 1)), alpha, 1e-8, K)
    tight = krls.stop_bounds(K, 0.1, Y, np.zeros((8, 1)), alpha, 1e-20, K)
    assert loose[0] > 1e3 * tight[0] and loose[1] > 1e3 * tight[1]


def test_labels_and_predictions() -> None:
    assert krls.label_matrix(np.array([0, 1, 1]), 2).tolist() == [[-1.0], [1.0], [1.0]]
    Y = krls.label_matrix(np.array([2, 0]), 3)
    assert Y.tolist() == [[-1.0, -1.0, 1.0], [1.0, -1.0, -1.0]]
    assert krls.predict_labels(Y).tolist() == [2, 0]
    assert krls.predict_labels(np.array([[0.3], [-0.1]])).tolist() == [1, 0]


def test_landmark_methods() -> None:
    rng = np.random.default_rng(1)
    W, rows = krls.make_landmarks("P", 5, 3, rng, pool_size=20)
    assert W is None and len(set(rows.tolist())) == 5
    W, _ = krls.make_landmarks("U", 5, 3, rng)
    assert W.shape == (5, 3) and W.min() >= 0 and W.max() <= 1
    W, _ = krls.make_landmarks("N", 400, 2, rng, mean=np.array([5.0, -5.0]),
                               std=np.array([1.0, 2.0]))
    np.testing.assert_allclose(W.mean(axis=0), [5.0, -5.0], atol=0.3)
    with pytest.raises(ValidationError, match="only 3 exist"):
        krls.make_landmarks("P", 5, 3, rng, pool_size=3)
    with pytest.raises(ValidationError, match="mean and standard deviation"):
        krls.make_landmarks("N", 5, 3, rng)
