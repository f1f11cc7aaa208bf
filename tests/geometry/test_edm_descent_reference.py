"""Alternating Descent against a plain loop implementation of the paper's algorithm, and its starts.

The reference below follows DPRV15 Algorithm 4 (and the edmbox code the seed paper ran) with
no vectorisation: for each point in turn, for each coordinate, the four cubic coefficients
from the known pairs, every real root tried, the one with the lowest s-stress taken.
"""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.geometry import landmark_problem
from fedsec.geometry.completers.alternating_descent import alternating_descent, colour_classes
from fedsec.geometry.completers.descent_starts import (
    anchor_clique,
    anchored_start,
    shortest_path_start,
)
from fedsec.geometry.edm import assemble_edm, edm, squared_distances


def reference_descent(D, known, X0, sweeps, order):
    """Coordinate-wise s-stress minimisation, one point and one coordinate at a time."""
    X = np.array(X0, dtype=float)
    for _ in range(sweeps):
        for i in order:
            neighbours = [j for j in range(len(X)) if known[i, j] and j != i]
            for k in range(X.shape[1]):
                diff = X[i] - X[neighbours]
                a = diff[:, k]
                r = (diff**2).sum(axis=1) - D[i, neighbours]
                roots = np.roots([4 * len(neighbours), 12 * a.sum(), 4 * np.sum(r + 2 * a * a),
                                  4 * np.sum(a * r)])
                roots = roots[np.abs(roots.imag) < 1e-9].real
                cost = [np.sum((t * t + 2 * a * t + r) ** 2) for t in roots]
                X[i, k] += roots[int(np.argmin(cost))]
        X -= X.mean(axis=0)
    return X


def _attack_instance(seed, n=12, m=5, d=4):
    rng = np.random.default_rng(seed)
    P, W = rng.uniform(size=(n, d)), rng.uniform(size=(m, d))
    D, mask = assemble_edm(None, squared_distances(P, W), squared_distances(W))
    known = mask & ~np.eye(n + m, dtype=bool)
    return np.nan_to_num(D), known, rng.normal(scale=0.3, size=(n + m, d)), P


@pytest.mark.parametrize("sweeps", [1, 4])
def test_iterates_equal_the_loop_reference_on_the_attack_structure(sweeps):
    D, known, X0, _ = _attack_instance(0)
    order = np.concatenate(colour_classes(known))  # landmarks first, then the hidden points

    expected = edm(reference_descent(D, known, X0, sweeps, order))
    got = alternating_descent(D, known, 4, rng=np.random.default_rng(0), init=X0,
                              max_iter=sweeps, tol=1e-300)

    assert np.abs(got - expected).max() < 1e-10 * np.abs(expected).max()


def test_iterates_equal_the_loop_reference_on_a_random_mask():
    rng = np.random.default_rng(1)
    points = rng.uniform(size=(14, 2))
    upper = np.triu(rng.random((14, 14)) < 0.5, 1)
    known = upper | upper.T
    D = np.where(known, squared_distances(points), 0.0)
    X0 = rng.normal(scale=0.3, size=(14, 2))
    order = np.concatenate(colour_classes(known))

    expected = edm(reference_descent(D, known, X0, 3, order))
    got = alternating_descent(D, known, 2, rng=rng, init=X0, max_iter=3, tol=1e-300)

    assert np.abs(got - expected).max() < 1e-10 * np.abs(expected).max()


def test_another_point_order_is_another_sweep_converging_to_the_same_distances():
    D, known, X0, P = _attack_instance(2, n=8, m=6, d=2)
    truth = squared_distances(P)

    index_order = edm(reference_descent(D, known, X0[:, :2], 300, range(len(D))))
    ours = alternating_descent(D, known, 2, rng=np.random.default_rng(0), init=X0[:, :2],
                               max_iter=300)

    assert np.abs(index_order[:8, :8] - truth).max() < 1e-6
    assert np.abs(ours[:8, :8] - truth).max() < 1e-6


def test_the_anchored_start_is_the_solution_once_landmarks_exceed_the_dimension():
    D, known, _, P = _attack_instance(3, n=40, m=5, d=4)
    sweeps = []

    out = alternating_descent(D, known, 4, rng=np.random.default_rng(0),
                              progress=lambda sweep, _: sweeps.append(sweep))

    assert np.abs(out[:40, :40] - squared_distances(P)).max() < 1e-9
    assert len(sweeps) <= 2


def test_the_anchored_start_places_points_through_already_placed_ones():
    rng = np.random.default_rng(4)
    points = rng.uniform(size=(9, 2))
    known = np.zeros((9, 9), bool)
    known[:3, :3] = True  # the clique
    known[3:6, :3] = known[:3, 3:6] = True  # placed from the clique
    known[6:, 3:6] = known[3:6, 6:] = True  # placed from those
    np.fill_diagonal(known, False)
    D = np.where(known, squared_distances(points), 0.0)

    X = anchored_start(D, known, 2)

    assert sorted(anchor_clique(known).tolist()) == [0, 1, 2, 3]  # 3 sees all of 0, 1, 2
    assert np.abs(edm(X) - squared_distances(points)).max() < 1e-9


def test_the_anchored_start_falls_back_to_shortest_paths_without_a_clique():
    problem = landmark_problem(20, 1, rng=np.random.default_rng(5))  # 1 landmark in 2-D
    known = problem.mask & ~np.eye(21, dtype=bool)
    values = np.nan_to_num(problem.D)

    assert anchor_clique(known).size < 3
    assert np.array_equal(anchored_start(values, known, 2),
                          shortest_path_start(values, known, 2))
