"""RDP's Riemannian BFGS: the fixed-rank geometry, the optimiser, and L-BFGS-B as a yardstick."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.data import load
from fedsec.errors import ValidationError
from fedsec.protocols.nri_dc import collaboration as cf
from fedsec.protocols.nri_dc import manifold as mf
from fedsec.protocols.nri_dc import maths


def random_point(rng: np.random.Generator, heights: list[int], n_columns: int,
                 rank: int) -> tuple[np.ndarray, mf.FixedRankProduct]:
    """A random point of the product of rank-``rank`` manifolds, blocks stacked."""
    spans = tuple(zip(np.cumsum([0, *heights[:-1]]).tolist(), np.cumsum(heights).tolist(),
                      strict=True))
    blocks = [rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n_columns))
              for m in heights]
    return np.vstack(blocks), mf.FixedRankProduct(spans=spans, n_columns=n_columns, rank=rank)


def drawn_point(data: st.DataObject, heights: list[int], n_columns: int, seed: int
                ) -> tuple[np.random.Generator, np.ndarray, mf.FixedRankProduct]:
    """A :func:`random_point` at a rank hypothesis draws (1 to the smallest block dimension),
    with the generator that made it."""
    rank = data.draw(st.integers(1, min([n_columns, *heights])))
    rng = np.random.default_rng(seed)
    return (rng, *random_point(rng, heights, n_columns, rank))


def tangent(rng: np.random.Generator, X: np.ndarray, manifold: mf.FixedRankProduct
            ) -> np.ndarray:
    """A random unit tangent vector at ``X``."""
    xi = mf.project(mf.normal_factors(X, manifold), rng.standard_normal(X.shape),
                    manifold.spans)
    return xi / np.linalg.norm(xi)


def rdp_problem(anchors: list[np.ndarray], n_dims: int, weight: float = 1.0
                ) -> tuple[mf.CostAndGradient, mf.FixedRankProduct]:
    spans = cf._spans(anchors)
    operator = cf.alignment_operator(anchors)
    geometry = mf.FixedRankProduct(spans=tuple(spans), n_columns=n_dims, rank=n_dims)
    return (lambda G: cf._rdp_value_and_gradient(G, operator, spans, weight)), geometry


def random_anchors(seed: int, n_workers: int = 5, n_features: int = 6, n_dims: int = 4,
                   rows: int = 60) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    X_anc = rng.standard_normal((rows, n_features))
    return [X_anc @ np.linalg.qr(rng.standard_normal((n_features, n_features)))[0][:, :n_dims]
            for _ in range(n_workers)]


def pima_anchors(seed: int, n_workers: int = 13, n_anchor: int = 500) -> list[np.ndarray]:
    """The paper's Pima setting, small: 13 workers x 50 standardised rows, m_tilde = 6."""
    rng = np.random.default_rng(seed)
    data = load("pima")
    X = (data.X - data.X.mean(axis=0)) / data.X.std(axis=0)
    rows = rng.permutation(X.shape[0])[:50 * n_workers].reshape(n_workers, 50)
    anchor = rng.standard_normal((n_anchor, X.shape[1]))
    return [maths.share(X[r], data.y[r], anchor, 6, sigma=0.1, rng=rng).anchor for r in rows]


# --- geometry ------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(2, 6), min_size=1, max_size=4), st.integers(1, 5),
       st.integers(0, 10_000), st.data())
def test_projection_is_an_orthogonal_projector_onto_the_tangent_space(
        heights: list[int], n_columns: int, seed: int, data: st.DataObject) -> None:
    rng, X, manifold = drawn_point(data, heights, n_columns, seed)
    normals = mf.normal_factors(X, manifold)
    Z, W = rng.standard_normal(X.shape), rng.standard_normal(X.shape)
    PZ = mf.project(normals, Z, manifold.spans)
    np.testing.assert_allclose(mf.project(normals, PZ, manifold.spans), PZ, atol=1e-12)
    assert mf.inner(PZ, W) == pytest.approx(mf.inner(Z, mf.project(normals, W, manifold.spans)),
                                            abs=1e-10)
    for (a, b), (U_perp, V_perp) in zip(manifold.spans, normals, strict=True):
        # Vandereycken's tangent space: U_perp^T Z V_perp = 0; its dimension (m + n - k) k
        np.testing.assert_allclose(U_perp.T @ PZ[a:b] @ V_perp, 0.0, atol=1e-12)
    batch = mf.project(normals, np.stack([Z, W]), manifold.spans)
    np.testing.assert_allclose(batch[0], PZ, atol=1e-12)
    P = np.column_stack([mf.project(normals, e.reshape(X.shape), manifold.spans).ravel()
                         for e in np.eye(X.size)])
    assert np.linalg.matrix_rank(P, tol=1e-8) == manifold.dimension


def test_at_full_rank_the_geometry_is_euclidean() -> None:
    rng = np.random.default_rng(0)
    X, manifold = random_point(rng, [6, 7, 6], 4, 4)
    Z = rng.standard_normal(X.shape)
    assert mf.normal_factors(X, manifold)[0][1].shape == (4, 0)
    assert np.array_equal(mf.project(mf.normal_factors(X, manifold), Z, manifold.spans), Z)
    assert np.array_equal(mf.retract(X, Z, manifold), X + Z)
    assert manifold.dimension == X.size


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(2, 6), min_size=1, max_size=3), st.integers(2, 5),
       st.integers(0, 10_000), st.data())
def test_the_retraction_stays_on_the_manifold_and_is_first_order(
        heights: list[int], n_columns: int, seed: int, data: st.DataObject) -> None:
    rng, X, manifold = drawn_point(data, heights, n_columns, seed)
    smallest = min(np.linalg.svd(X[a:b], compute_uv=False)[manifold.rank - 1]
                   for a, b in manifold.spans)
    xi = tangent(rng, X, manifold)
    np.testing.assert_allclose(mf.retract(X, 0 * xi, manifold), X, atol=1e-12)
    errors = []
    for t in (1e-2, 1e-3):
        step = t * smallest
        Y = mf.retract(X, step * xi, manifold)
        assert mf.on_manifold(Y, manifold, rtol=1e-9)
        errors.append(np.linalg.norm(Y - X - step * xi) / step)
    # R_X(t xi) = X + t xi + O(t^2): the error per unit step shrinks with t (second order here)
    assert errors[1] <= 0.2 * errors[0] + 1e-9


def test_the_retraction_is_the_best_rank_k_approximation() -> None:
    rng = np.random.default_rng(3)
    X, manifold = random_point(rng, [5], 4, 2)
    xi = rng.standard_normal(X.shape)
    Y = mf.retract(X, xi, manifold)
    U, s, Vt = np.linalg.svd(X + xi)
    np.testing.assert_allclose(Y, (U[:, :2] * s[:2]) @ Vt[:2], atol=1e-12)
    assert np.linalg.matrix_rank(Y) == 2
    with pytest.raises(ValidationError, match="rank"):
        mf.FixedRankProduct(spans=((0, 3),), n_columns=2, rank=3)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.1, 5.0))
def test_the_rdp_riemannian_gradient_matches_finite_differences(seed: int,
                                                                 weight: float) -> None:
    anchors = random_anchors(seed % 97, n_workers=3, n_features=5, n_dims=3, rows=20)
    cost, manifold = rdp_problem(anchors, 3, weight)
    rng = np.random.default_rng(seed)
    X = np.vstack([np.linalg.qr(rng.standard_normal((3, 3)))[0] * rng.uniform(0.5, 2)
                   for _ in anchors])
    gradient = mf.riemannian_gradient(X, cost(X)[1], manifold)
    for _ in range(3):
        xi = tangent(rng, X, manifold)
        t = 1e-5
        numeric = (cost(mf.retract(X, t * xi, manifold))[0]
                   - cost(mf.retract(X, -t * xi, manifold))[0]) / (2 * t)
        assert numeric == pytest.approx(mf.inner(gradient, xi),
                                        rel=1e-5, abs=1e-6 * np.linalg.norm(gradient))


def test_a_low_rank_riemannian_gradient_matches_finite_differences() -> None:
    # rank 2 in 5 x 4: the projection is not the identity, so this checks P_X as well
    rng = np.random.default_rng(4)
    X, manifold = random_point(rng, [5, 6], 4, 2)
    B = rng.standard_normal(X.shape)
    euclidean = 2 * (X - B)
    gradient = mf.riemannian_gradient(X, euclidean, manifold)
    assert np.linalg.norm(gradient - euclidean) > 0.1 * np.linalg.norm(euclidean)
    for _ in range(5):
        xi = tangent(rng, X, manifold)
        t = 1e-5
        numeric = (np.sum((mf.retract(X, t * xi, manifold) - B) ** 2)
                   - np.sum((mf.retract(X, -t * xi, manifold) - B) ** 2)) / (2 * t)
        assert numeric == pytest.approx(mf.inner(gradient, xi), rel=1e-5, abs=1e-7)


# --- the optimiser -------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3))
def test_rbfgs_finds_the_best_low_rank_approximation(seed: int, rank: int) -> None:
    # min ||X - B||^2 over rank-k matrices: Eckart-Young, no spurious local minima
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((6, 4))
    start, manifold = random_point(rng, [6], 4, rank)
    found = mf.rbfgs(lambda X: (float(np.sum((X - B) ** 2)), 2 * (X - B)), start, manifold,
                     max_iterations=2000)
    U, s, Vt = np.linalg.svd(B)
    assert found.converged, found.reason
    assert found.value == pytest.approx(float(np.sum(s[rank:] ** 2)), rel=1e-9, abs=1e-12)
    if s[rank - 1] - s[rank] > 0.1:  # a clear gap: the minimiser is unique
        np.testing.assert_allclose(found.point, (U[:, :rank] * s[:rank]) @ Vt[:rank], atol=1e-5)
    assert mf.on_manifold(found.point, manifold, rtol=1e-9)


@pytest.mark.parametrize("init", ["opp", "ls"])
def test_rbfgs_matches_lbfgs_on_a_random_problem_and_never_increases_the_objective(
        init: str) -> None:
    anchors = random_anchors(5)
    rbfgs = cf.rank_deficiency_penalty(anchors, 4, init=init, tol=1e-10)
    lbfgs = cf.rank_deficiency_penalty(anchors, 4, init=init, optimizer="lbfgs", tol=1e-10)
    assert rbfgs.converged and lbfgs.converged
    history = np.array(rbfgs.history)
    assert len(history) == rbfgs.iterations + 1 > 5
    assert np.all(np.diff(history) <= 0.0)
    assert history[0] == pytest.approx(lbfgs.history[0], rel=1e-12)  # the same start
    assert history[-1] <= lbfgs.history[-1] * (1 + 1e-8)
    assert history[-1] == pytest.approx(cf.rdp_objective(anchors, rbfgs.functions, weight=1.0),
                                        rel=1e-12)
    for G in rbfgs.functions:
        assert np.linalg.matrix_rank(G) == 4


def test_rbfgs_against_lbfgs_on_small_pima_problems() -> None:
    """RDP is not convex: from the same start the two optimisers may settle in different
    local minima. Over these 20 Pima-like problems (seeds 0-9, both starts) RBFGS ends
    within 1e-9 of L-BFGS-B in 18 and 2.2% and 2.9% above it in 2 (the OPP starts of seeds 0
    and 3; measured on numpy 2.4 / scipy 1.17); each end is a local minimum (the gradient
    down by more than 4 orders of magnitude)."""
    gaps = []
    for seed in range(10):
        anchors = pima_anchors(seed)
        cost, _ = rdp_problem(anchors, 6)
        for init in ("opp", "ls"):
            rbfgs = cf.rank_deficiency_penalty(anchors, 6, init=init, tol=1e-10)
            lbfgs = cf.rank_deficiency_penalty(anchors, 6, init=init, optimizer="lbfgs",
                                               tol=1e-10)
            assert rbfgs.converged and np.all(np.diff(rbfgs.history) <= 0.0)
            start = (cf.orthogonal_procrustes if init == "opp"
                     else cf.least_squares)(anchors, 6).functions
            first = np.linalg.norm(cost(cf.common_scale(anchors, start) * np.vstack(start))[1])
            assert np.linalg.norm(cost(np.vstack(rbfgs.functions))[1]) < 1e-4 * first
            gaps.append(rbfgs.history[-1] / lbfgs.history[-1] - 1)
    gaps_array = np.array(gaps)
    assert np.sum(np.abs(gaps_array) <= 1e-7) >= 15
    assert gaps_array.min() >= -1e-7 and gaps_array.max() < 0.05


def test_rbfgs_stops_at_its_gradient_tolerance_and_reports_it() -> None:
    anchors = random_anchors(6, n_workers=4)
    cost, manifold = rdp_problem(anchors, 4, 2.0)
    start = np.vstack(cf.orthogonal_procrustes(anchors, 4).functions)
    found = mf.rbfgs(cost, start, manifold, gradient_tol=1e-4, max_iterations=1000)
    assert (found.converged, found.reason) == (True, "gradient")
    assert found.gradient_norms[-1] <= 1e-4 < found.gradient_norms[0]
    capped = mf.rbfgs(cost, start, manifold, max_iterations=3)
    assert (capped.converged, capped.reason, capped.iterations) == (False, "max_iterations", 3)
    assert capped.value >= found.value


def test_rbfgs_refuses_a_start_off_the_manifold() -> None:
    anchors = random_anchors(7, n_workers=2)
    cost, manifold = rdp_problem(anchors, 4)
    start = np.zeros((8, 4))
    with pytest.raises(ValidationError, match="start on the manifold"):
        mf.rbfgs(cost, start, manifold)
    with pytest.raises(ValidationError, match="full-rank"):
        mf.lbfgs_b(cost, start, mf.FixedRankProduct(spans=((0, 6),), n_columns=4, rank=2))


def test_rdp_optimizer_choice_is_checked_and_dispatched() -> None:
    anchors = random_anchors(8, n_workers=3)
    with pytest.raises(ValidationError, match="optimizer"):
        cf.rank_deficiency_penalty(anchors, 4, optimizer="adam")
    lbfgs = cf.collaboration_functions("rdp", anchors, 4, rdp_optimizer="lbfgs")
    rbfgs = cf.collaboration_functions("rdp", anchors, 4)
    assert len(lbfgs.history) == 2 < len(rbfgs.history)
