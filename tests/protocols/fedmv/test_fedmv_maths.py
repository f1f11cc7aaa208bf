"""MVL's block updates against closed forms and optimality conditions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.protocols.fedmv import maths


def problem(seed: int = 0, n: int = 60, dims: tuple[int, ...] = (5, 4, 3), C: int = 3):
    rng = np.random.default_rng(seed)
    Xs = [rng.normal(size=(n, d)) for d in dims]
    y = rng.integers(0, C, size=n)
    return Xs, maths.one_hot(y, C), rng


def start(Xs, C: int, rng: np.random.Generator):
    n = Xs[0].shape[0]
    return ([rng.normal(size=(X.shape[1], C)) for X in Xs],
            [maths.orthonormal(rng, n, C) for _ in Xs], maths.orthonormal(rng, n, C))


def spd_system(seed: int, d: int, C: int) -> tuple[np.ndarray, np.ndarray]:
    """A Gram matrix plus a positive diagonal spanning many magnitudes, as IRLS builds it."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(d + int(rng.integers(0, 3 * d)), d)) * rng.uniform(0.01, 10.0)
    A = X.T @ X
    A.ravel()[::d + 1] += 10.0 ** rng.uniform(-6, 6, size=d)
    return A, rng.normal(size=(d, C))


def irls_reference(X: np.ndarray, Z: np.ndarray, beta: float, W0: np.ndarray, *,
                   eps: float = 1e-8, tol: float = 1e-8, max_iter: int = 50
                   ) -> tuple[np.ndarray, int]:
    """IRLS written plainly, with scipy's checked solve (the oracle of the fast loop)."""
    G, B, W = X.T @ X, X.T @ Z, np.array(W0, dtype=np.float64)
    for step in range(1, max_iter + 1):
        a = 1.0 / (2.0 * (np.linalg.norm(W, axis=1) + eps))
        W_new = scipy.linalg.solve(G + beta * np.diag(a), B, assume_a="pos")
        change = np.linalg.norm(W_new - W) / max(float(np.linalg.norm(W)), maths.TINY)
        W = W_new
        if change <= tol:
            return W, step
    return W, max_iter


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 64), C=st.integers(1, 10))
def test_solve_spd_has_the_bits_of_scipys_positive_definite_solve(seed: int, d: int,
                                                                  C: int) -> None:
    A, B = spd_system(seed, d, C)
    x = maths.solve_spd(A, B)
    expected = scipy.linalg.solve(A, B, assume_a="pos")
    assert np.array_equal(x, expected)
    assert x.flags.c_contiguous == expected.flags.c_contiguous


def test_solve_spd_refuses_a_matrix_that_is_not_positive_definite() -> None:
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        maths.solve_spd(np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones((2, 1)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.sampled_from([1, 5, 32, 47]),
       C=st.sampled_from([1, 2, 10]), beta=st.floats(1e-3, 1e2),
       tol=st.sampled_from([0.0, 1e-12, 1e-8]))
def test_irls_has_the_bits_and_steps_of_the_plain_loop(seed: int, d: int, C: int, beta: float,
                                                       tol: float) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(int(rng.integers(d, 4 * d + 10)), d))
    Z, W0 = rng.normal(size=(X.shape[0], C)), rng.normal(size=(d, C))
    W, steps = maths.irls_weights(X, Z, beta, W0, tol=tol, max_iter=40)
    W_ref, steps_ref = irls_reference(X, Z, beta, W0, tol=tol, max_iter=40)
    assert steps == steps_ref and np.array_equal(W, W_ref)


def test_irls_without_penalty_is_least_squares() -> None:
    Xs, Y, _ = problem()
    W, _ = maths.irls_weights(Xs[0], Y, 0.0, np.ones((5, 3)))
    np.testing.assert_allclose(W, np.linalg.lstsq(Xs[0], Y, rcond=None)[0], atol=1e-10)


def test_irls_meets_the_l21_optimality_conditions() -> None:
    Xs, Y, _ = problem(n=80)
    beta = 3.0
    W, steps = maths.irls_weights(Xs[0], Y, beta, np.ones((5, 3)), eps=1e-12, tol=1e-13,
                                  max_iter=2000)
    gradient = 2 * Xs[0].T @ (Xs[0] @ W - Y)
    norms = np.linalg.norm(W, axis=1)
    active = norms > 1e-6
    # nonzero rows: 2 X^T (X W - Y)_i + beta W_i / ||W_i|| = 0
    residual = gradient[active] + beta * W[active] / norms[active, None]
    assert np.abs(residual).max() < 1e-6 and steps < 2000


def test_the_test_phase_reaches_its_closed_form_fixed_point() -> None:
    rng = np.random.default_rng(1)
    images = [rng.normal(size=(10, 3)) for _ in range(3)]
    zetas = [0.5, 2.0, 8.0]  # unequal weights: the first average is not yet the fixed point
    Z, steps = maths.test_consensus(images, zetas, tol=1e-14)
    assert steps > 1
    np.testing.assert_allclose(Z, maths.test_fixed_point(images, zetas), rtol=1e-10, atol=1e-12)


def test_the_objective_never_increases_and_two_starts_reach_one_optimum() -> None:
    Xs, Y, rng = problem()
    tight = maths.Settings(tol=1e-11, max_rounds=5000, inner_tol=1e-12, max_inner=500)
    fits = []
    for _ in range(2):
        Ws, Zs, Z = start(Xs, 3, rng)
        fits.append(maths.fit_mvl(Xs, Y, betas=[4.0] * 3, zetas=[2.0] * 3, eta=1.0, Ws=Ws,
                                  Zs=Zs, Z=Z, settings=tight, track_objective=True))
    objectives = np.array(fits[0].objectives)
    assert np.all(np.diff(objectives) <= 1e-9 * objectives[:-1])
    assert all(f.converged for f in fits)
    # jointly convex: the optimum does not depend on the start (the paper says non-convex)
    for a, b in zip(fits[0].Ws, fits[1].Ws, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fits[0].Z, fits[1].Z, rtol=1e-6, atol=1e-8)


@settings(max_examples=30, deadline=None)
@given(zetas=st.lists(st.floats(0.1, 32.0), min_size=2, max_size=4), eta=st.floats(0.1, 32.0))
def test_consensus_is_the_weighted_average_it_claims(zetas: list[float], eta: float) -> None:
    rng = np.random.default_rng(len(zetas))
    Zs = [rng.normal(size=(4, 2)) for _ in zetas]
    Y = rng.normal(size=(4, 2))
    Z = maths.consensus(sum(z * Zk for z, Zk in zip(zetas, Zs, strict=True)), sum(zetas), eta, Y)
    # the consensus minimises sum_k zeta_k ||Z_k - Z||^2 + eta ||Z - Y||^2: its gradient vanishes
    gradient = sum(z * (Z - Zk) for z, Zk in zip(zetas, Zs, strict=True)) + eta * (Z - Y)
    assert np.abs(gradient).max() <= 1e-9 * (1 + max(np.abs(Zk).max() for Zk in Zs))


def test_the_single_view_baseline_solves_its_own_problem() -> None:
    Xs, Y, _ = problem()
    W = maths.single_view(Xs[1], Y, 0.0)
    np.testing.assert_allclose(W, np.linalg.lstsq(Xs[1], Y, rcond=None)[0], atol=1e-8)


def test_l21_norm_and_one_hot() -> None:
    assert maths.l21_norm(np.zeros((3, 2))) == 0.0
    with pytest.raises(IndexError):
        maths.one_hot(np.array([3]), 3)
