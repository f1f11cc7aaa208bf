"""Basic EDM geometry: distances, the EDM test, MDS, Procrustes, Nyström, assembly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedsec.errors import ValidationError
from fedsec.geometry import (
    assemble_edm,
    classical_mds,
    edm,
    is_edm,
    nystrom_completion,
    procrustes_align,
    squared_distances,
)


def point_sets(max_points: int = 12, max_dim: int = 4):
    shapes = st.tuples(st.integers(1, max_points), st.integers(1, max_dim))
    return shapes.flatmap(lambda shape: arrays(
        np.float64, shape, elements=st.floats(-100, 100, allow_nan=False, width=64)))


def random_rotation(rng: np.random.Generator, dim: int) -> np.ndarray:
    Q, R = np.linalg.qr(rng.normal(size=(dim, dim)))
    return Q * np.sign(np.diag(R))


def test_squared_distances_matches_direct_formula():
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(7, 3)), rng.normal(size=(4, 3))

    out = squared_distances(A, B)

    direct = ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1)
    assert out.shape == (7, 4)
    np.testing.assert_allclose(out, direct, atol=1e-12)


def test_squared_distances_of_one_set_is_symmetric_with_zero_diagonal():
    X = np.random.default_rng(1).normal(size=(9, 2)) * 1e3 + 1e6

    D = squared_distances(X)

    assert np.array_equal(D, D.T)
    assert np.all(np.diag(D) == 0.0)
    assert D.min() >= 0.0


def test_squared_distances_refuses_mismatched_columns():
    with pytest.raises(ValidationError, match="'B' parameter of squared_distances"):
        squared_distances(np.zeros((3, 2)), np.zeros((3, 3)))


@settings(max_examples=60, deadline=None)
@given(point_sets())
def test_edm_of_any_point_set_is_an_edm(X):
    assert is_edm(edm(X))


@pytest.mark.parametrize("matrix", [
    [[0.0, 1.0, 9.0], [1.0, 0.0, 1.0], [9.0, 1.0, 0.0]],  # violates the triangle inequality
    [[0.0, 1.0], [2.0, 0.0]],  # asymmetric
    [[1.0, 1.0], [1.0, 0.0]],  # nonzero diagonal
    [[0.0, -1.0], [-1.0, 0.0]],  # negative
    [[0.0, 1.0, 2.0]],  # not square
])
def test_is_edm_rejects_non_edms(matrix):
    assert not is_edm(np.array(matrix))


def test_classical_mds_recovers_points_up_to_rigid_motion():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3))

    Y = classical_mds(edm(X), 3)
    aligned, transform = procrustes_align(Y, X)

    assert np.max(np.abs(aligned - X)) < 1e-8
    assert transform["residual"] < 1e-8


@settings(max_examples=40, deadline=None)
@given(point_sets(max_points=10, max_dim=3))
def test_classical_mds_keeps_the_edm(X):
    Y = classical_mds(edm(X), X.shape[1])

    scale = max(float(np.max(edm(X))), 1.0)
    assert np.max(np.abs(edm(Y) - edm(X))) <= 1e-6 * scale


def test_classical_mds_pads_dimensions_beyond_the_rank():
    X = np.random.default_rng(3).normal(size=(5, 2))

    Y = classical_mds(edm(X), 6)

    assert Y.shape == (5, 6)
    np.testing.assert_allclose(edm(Y), edm(X), atol=1e-9)


def test_procrustes_recovers_a_known_rotation_and_translation():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 3))
    Q, t = random_rotation(rng, 3), rng.normal(size=3) * 10
    moved = X @ Q + t

    aligned, transform = procrustes_align(moved, X)

    np.testing.assert_allclose(aligned, X, atol=1e-10)
    np.testing.assert_allclose(transform["rotation"], Q.T, atol=1e-10)
    assert transform["scale"] == 1.0


def test_procrustes_recovers_scale_when_asked():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(15, 2))
    moved = 2.5 * X @ random_rotation(rng, 2) - 3.0

    aligned, transform = procrustes_align(moved, X, scale=True)

    np.testing.assert_allclose(aligned, X, atol=1e-10)
    assert transform["scale"] == pytest.approx(1 / 2.5)


def test_procrustes_pads_the_smaller_dimension():
    rng = np.random.default_rng(6)
    flat = rng.normal(size=(12, 2))
    embedded = np.hstack([flat, np.zeros((12, 1))]) @ random_rotation(rng, 3) + 1.0

    aligned, _ = procrustes_align(flat, embedded)

    assert aligned.shape == (12, 3)
    np.testing.assert_allclose(aligned, embedded, atol=1e-10)


def test_procrustes_refuses_different_point_counts():
    with pytest.raises(ValidationError, match="'X_est' parameter of procrustes_align"):
        procrustes_align(np.zeros((3, 2)), np.zeros((4, 2)))


@pytest.mark.parametrize(("dim", "n_landmarks"), [(2, 4), (3, 5), (3, 12), (5, 7), (3, 4)])
def test_nystrom_is_exact_when_landmarks_span_the_space(dim, n_landmarks):
    # n_landmarks >= dim + 2 is the documented promise; (3, 4) checks m = d + 1 too.
    rng = np.random.default_rng(dim * 100 + n_landmarks)
    X, W = rng.normal(size=(50, dim)), rng.normal(size=(n_landmarks, dim))

    D_X = nystrom_completion(squared_distances(X, W), edm(W))

    assert np.linalg.norm(D_X - edm(X)) <= 1e-8 * np.linalg.norm(edm(X))


@pytest.mark.parametrize(("dim", "n_landmarks"), [(3, 3), (4, 2), (5, 5)])
def test_nystrom_is_not_exact_with_too_few_landmarks(dim, n_landmarks):
    rng = np.random.default_rng(dim * 10 + n_landmarks)
    X, W = rng.normal(size=(40, dim)), rng.normal(size=(n_landmarks, dim))
    truth = edm(X)

    D_X = nystrom_completion(squared_distances(X, W), edm(W))

    assert np.linalg.norm(D_X - truth) > 1e-3 * np.linalg.norm(truth)
    assert np.array_equal(D_X, D_X.T)
    assert D_X.min() >= 0.0
    assert np.all(np.diag(D_X) == 0.0)
    assert is_edm(D_X)
    assert np.all(D_X <= truth + 1e-9 * truth.max())  # distances of projections


def test_nystrom_dim_truncation_denoises_towards_the_truth():
    rng = np.random.default_rng(7)
    X, W = rng.normal(size=(60, 2)), rng.normal(size=(20, 2))
    noise = rng.normal(scale=1e-3, size=(60, 20))

    exact = nystrom_completion(squared_distances(X, W) + noise, edm(W), dim=2)

    assert np.linalg.norm(exact - edm(X)) < 1e-2 * np.linalg.norm(edm(X))


def test_nystrom_refuses_mismatched_landmark_blocks():
    with pytest.raises(ValidationError, match="'D_W' parameter of nystrom_completion"):
        nystrom_completion(np.zeros((4, 3)), np.zeros((2, 2)))


def test_assemble_edm_builds_blocks_and_mask():
    rng = np.random.default_rng(8)
    X, W = rng.normal(size=(4, 2)), rng.normal(size=(3, 2))
    D_XW = squared_distances(X, W)
    D_XW[1, 2] = np.nan  # an underflowed kernel value

    D, mask = assemble_edm(None, D_XW, edm(W))

    assert D.shape == mask.shape == (7, 7)
    assert np.array_equal(mask, mask.T)
    assert np.all(np.diag(mask))
    assert not mask[:4, :4][~np.eye(4, dtype=bool)].any()
    assert not mask[1, 4 + 2] and not mask[4 + 2, 1]
    np.testing.assert_array_equal(D[mask], np.block(
        [[edm(X), D_XW], [D_XW.T, edm(W)]])[mask])
    assert np.isnan(D[~mask]).all()


def test_assemble_edm_without_landmark_block_and_with_private_block():
    X, W = np.eye(3), np.ones((2, 3))

    D, mask = assemble_edm(edm(X), squared_distances(X, W), None)

    assert mask[:3, :3].all()
    assert mask[3:, 3:].sum() == 2  # only the diagonal
    np.testing.assert_array_equal(D[:3, :3], edm(X))
    assert np.isnan(D[3, 4])


def test_assemble_edm_refuses_mismatched_blocks():
    with pytest.raises(ValidationError, match="'D_W' parameter of assemble_edm"):
        assemble_edm(None, np.zeros((3, 2)), np.zeros((3, 3)))
