"""Collaboration functions (LS, GEP, OPP, GOPP, RDP) against direct references."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.errors import ValidationError
from fedsec.protocols.nri_dc import collaboration as cf


def orthogonal(rng: np.random.Generator, size: int) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((size, size)))
    return Q * np.sign(np.diag(R))


def anchors_of(seed: int, n_workers: int = 4, n_features: int = 5, n_dims: int = 4,
               rows: int = 60) -> list[np.ndarray]:
    """Images ``X_anc F_i`` of one anchor under random maps with orthonormal columns."""
    rng = np.random.default_rng(seed)
    X_anc = rng.standard_normal((rows, n_features))
    return [X_anc @ orthogonal(rng, n_features)[:, :n_dims] for _ in range(n_workers)]


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(1, 5), st.integers(0, 10_000))
def test_alignment_error_is_the_pairwise_sum_and_a_quadratic_form(n_workers: int, n_dims: int,
                                                                 seed: int) -> None:
    rng = np.random.default_rng(seed)
    anchors = [rng.standard_normal((9, n_dims + 1)) for _ in range(n_workers)]
    functions = [rng.standard_normal((n_dims + 1, n_dims)) for _ in range(n_workers)]
    pairwise = sum(np.sum((anchors[i] @ functions[i] - anchors[j] @ functions[j]) ** 2)
                   for i in range(n_workers) for j in range(i + 1, n_workers))
    G = np.vstack(functions)
    quadratic = np.trace(G.T @ cf.alignment_operator(anchors) @ G)
    assert cf.alignment_error(anchors, functions) == pytest.approx(pairwise, rel=1e-9)
    assert quadratic == pytest.approx(pairwise, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(0, 10_000))
def test_opp_is_orthogonal_and_aligns_rotated_copies_exactly(n_workers: int, seed: int) -> None:
    # full-dimensional maps: every A_i is a rotation of the same anchor, so exact alignment exists
    anchors = anchors_of(seed, n_workers=n_workers, n_features=4, n_dims=4)
    found = cf.orthogonal_procrustes(anchors, 4)
    for G in found.functions:
        np.testing.assert_allclose(G.T @ G, np.eye(4), atol=1e-10)
    total = sum(np.sum(A**2) for A in anchors)
    assert abs(cf.alignment_error(anchors, found.functions)) <= 1e-10 * total
    Z = cf.target_basis(anchors, 4)
    for A, G in zip(anchors, found.functions, strict=True):
        np.testing.assert_allclose(G, scipy.linalg.orthogonal_procrustes(A, Z)[0], atol=1e-9)


def test_target_is_the_leading_left_singular_subspace() -> None:
    anchors = anchors_of(1)
    Z = cf.target_basis(anchors, 3)
    U = np.linalg.svd(np.hstack(anchors), full_matrices=False)[0][:, :3]
    np.testing.assert_allclose(Z.T @ Z, np.eye(3), atol=1e-10)
    np.testing.assert_allclose(Z @ Z.T, U @ U.T, atol=1e-9)


def test_ls_is_the_pseudoinverse_onto_the_target() -> None:
    anchors = anchors_of(2)
    Z = cf.target_basis(anchors, 3)
    found = cf.least_squares(anchors, 3)
    for A, G in zip(anchors, found.functions, strict=True):
        np.testing.assert_allclose(G, np.linalg.pinv(A) @ Z, atol=1e-10)


def test_gep_solves_the_generalized_eigenproblem_with_unit_constraint() -> None:
    anchors = anchors_of(3, n_workers=5)
    n_workers = len(anchors)
    found = cf.generalized_eigen(anchors, 2)
    stacked = np.hstack(anchors)
    M = stacked.T @ stacked
    D = scipy.linalg.block_diag(*[A.T @ A for A in anchors])
    G = np.vstack(found.functions)
    top = scipy.linalg.eigh(M, D, eigvals_only=True)[::-1][:2]
    for k in range(2):
        g = G[:, k]
        assert g @ D @ g == pytest.approx(1.0, rel=1e-9)  # sum_i ||A_i g_i||^2 = 1
        np.testing.assert_allclose(M @ g, top[k] * (D @ g), atol=1e-8 * np.abs(M).max())
        column = [G_i[:, [k]] for G_i in found.functions]
        assert cf.alignment_error(anchors, column) == pytest.approx(n_workers - top[k], rel=1e-8)
    # no unit-constrained direction aligns better than the first generalized eigenvector
    rng = np.random.default_rng(0)
    best = n_workers - top[0]
    for _ in range(200):
        g = rng.standard_normal(G.shape[0])
        g /= np.sqrt(g @ D @ g)
        blocks = np.split(g, np.cumsum([A.shape[1] for A in anchors])[:-1])
        assert cf.alignment_error(anchors, [b[:, None] for b in blocks]) >= best - 1e-9


def test_gopp_never_increases_its_objective_and_beats_opp() -> None:
    anchors = anchors_of(4, n_workers=6, n_features=6, n_dims=4)
    found = cf.generalized_procrustes(anchors, 4, tol=1e-12, max_iterations=200)
    history = np.array(found.history)
    assert found.iterations == len(history) > 1
    assert np.all(np.diff(history) <= 1e-9 * history[0])
    for G in found.functions:
        np.testing.assert_allclose(G.T @ G, np.eye(4), atol=1e-10)

    def spread(functions: tuple[np.ndarray, ...]) -> float:
        mapped = [A @ G for A, G in zip(anchors, functions, strict=True)]
        mean = np.mean(mapped, axis=0)
        return float(sum(np.sum((M - mean) ** 2) for M in mapped))

    assert spread(found.functions) <= spread(cf.orthogonal_procrustes(anchors, 4).functions)


@pytest.mark.parametrize("init", ["opp", "ls"])
def test_rdp_decreases_its_objective_from_its_start(init: str) -> None:
    anchors = anchors_of(5, n_workers=5, n_features=6, n_dims=4)
    found = cf.rank_deficiency_penalty(anchors, 4, weight=2.0, init=init)
    start = (cf.orthogonal_procrustes if init == "opp" else cf.least_squares)(anchors, 4)
    scale = cf.common_scale(anchors, start.functions)  # 1 for OPP, ~sqrt(r) for LS
    before = cf.rdp_objective(anchors, [scale * G for G in start.functions], weight=2.0)
    after = cf.rdp_objective(anchors, found.functions, weight=2.0)
    assert found.history[0] == pytest.approx(before, rel=1e-9)
    assert found.history[-1] == pytest.approx(after, rel=1e-9)
    assert after < before
    for G in found.functions:
        assert np.linalg.matrix_rank(G) == 4


def test_rdp_stretches_a_direction_every_worker_shares() -> None:
    # three 3-dimensional subspaces of R^4 share (at least) one direction: free alignment
    anchors = anchors_of(9, n_workers=3, n_features=4, n_dims=3, rows=50)
    found = cf.rank_deficiency_penalty(anchors, 3, max_iterations=300)
    assert max(np.linalg.cond(G) for G in found.functions) > 100
    assert max(np.linalg.cond(G) for G in
               cf.rank_deficiency_penalty(anchors_of(9, n_workers=8, n_features=4, n_dims=3,
                                                     rows=50), 3).functions) < 100


def test_rdp_gradient_matches_finite_differences() -> None:
    anchors = anchors_of(6, n_workers=3, n_features=4, n_dims=3, rows=20)
    rng = np.random.default_rng(1)
    G = [rng.standard_normal((3, 3)) for _ in anchors]
    weight = 0.7
    grad = np.vstack(cf.rdp_gradient(anchors, G, weight=weight))
    step = 1e-6
    for index in [(0, 0), (4, 1), (8, 2)]:
        bumped = [g.copy() for g in G]
        bumped[index[0] // 3][index[0] % 3, index[1]] += step
        lowered = [g.copy() for g in G]
        lowered[index[0] // 3][index[0] % 3, index[1]] -= step
        numeric = (cf.rdp_objective(anchors, bumped, weight=weight)
                   - cf.rdp_objective(anchors, lowered, weight=weight)) / (2 * step)
        assert numeric == pytest.approx(grad[index], rel=1e-5, abs=1e-6)


def test_rank_penalty_is_smallest_for_unit_determinant() -> None:
    grid = np.linspace(-5, 5, 101)
    values = [cf.rank_penalty(v) for v in grid]
    assert grid[int(np.argmin(values))] == pytest.approx(0.0)
    assert cf.rank_penalty(-5.0) > 100 * cf.rank_penalty(5.0) / 6  # steep towards rank deficiency


def test_common_scale_leaves_orthogonal_maps_and_undoes_the_ls_shrinkage() -> None:
    anchors = anchors_of(7, n_features=4, n_dims=4, rows=500)
    opp = cf.orthogonal_procrustes(anchors, 4)
    assert cf.common_scale(anchors, opp.functions) == pytest.approx(1.0, rel=1e-12)
    ls = cf.least_squares(anchors, 4)
    scale = cf.common_scale(anchors, ls.functions)
    assert scale == pytest.approx(np.sqrt(np.sum(anchors[0] ** 2) / 4), rel=0.2)  # ~ sqrt(r)


def test_bad_inputs_are_refused() -> None:
    anchors = anchors_of(8)
    with pytest.raises(ValidationError, match="collaborative dimension"):
        cf.orthogonal_procrustes(anchors, 5)
    with pytest.raises(ValidationError, match="same anchor rows"):
        cf.least_squares([anchors[0], anchors[1][:10]], 2)
    with pytest.raises(ValidationError, match="Unknown collaboration method"):
        cf.collaboration_functions("pca", anchors, 2)
    with pytest.raises(ValidationError, match="starts from"):
        cf.rank_deficiency_penalty(anchors, 2, init="gep")
