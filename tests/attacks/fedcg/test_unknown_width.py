"""Multilateration with an unknown kernel width, at and below d + 2 landmarks."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.attacks.fedcg.unknown_width import (
    ANNOUNCED,
    BOX_PRIOR,
    IDENTIFIED,
    SHARED,
    candidate_widths,
    multilaterate_unknown_gamma,
)
from fedsec.geometry.edm import squared_distances
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.views import build_view


def _block(n, m, d, gamma=2.5, seed=0):
    rng = np.random.default_rng(seed)
    X, W = rng.uniform(size=(n, d)), rng.uniform(size=(m, d))
    return X, W, gamma * squared_distances(X, W)


def test_d_plus_2_landmarks_identify_points_and_width():
    X, W, L = _block(20, 5, 3)

    est, gammas, spread, how, _ = multilaterate_unknown_gamma(L, W)

    assert np.abs(est - X).max() < 1e-9 and np.allclose(gammas, 2.5)
    assert how == "" and np.all(spread == 0.0)


def test_each_row_alone_leaves_two_widths_at_d_plus_1_the_true_one_among_them():
    _, W, L = _block(10, 4, 3)

    candidates = candidate_widths(L, W)

    assert np.all(np.nanmin(np.abs(candidates - 2.5), axis=1) < 1e-9)


def test_d_plus_1_landmarks_and_a_common_width_identify_every_row():
    X, W, L = _block(10, 4, 3)

    est, gammas, spread, how, _ = multilaterate_unknown_gamma(L, W)

    assert how == SHARED
    assert np.abs(est - X).max() < 1e-8 and np.allclose(gammas, 2.5)
    assert np.all(spread == 0.0)


def test_one_row_at_d_plus_1_takes_the_announced_width_else_the_box_prior():
    X, W, L = _block(1, 4, 3)

    est, _, _, how, _ = multilaterate_unknown_gamma(L, W, announced=2.5)
    assert how == ANNOUNCED and np.abs(est - X).max() < 1e-9

    est, gammas, _, how, _ = multilaterate_unknown_gamma(L, W)
    assert how == BOX_PRIOR and np.all(np.isfinite(est)) and gammas[0] > 0


def test_below_d_plus_1_the_box_prior_width_is_near_and_the_points_are_sphere_centres():
    X, W, L = _block(400, 2, 3, gamma=4.0)

    est, gammas, spread, how, _ = multilaterate_unknown_gamma(L, W)

    assert how == BOX_PRIOR
    assert gammas[0] == pytest.approx(4.0, rel=0.15)
    assert np.all(spread[np.isfinite(spread)] >= 0) and np.nanmean(spread) > 0.1
    centroid_error = np.linalg.norm(X - W.mean(axis=0), axis=1).mean()
    assert np.linalg.norm(est - X, axis=1).mean() < centroid_error


def test_rows_below_take_the_width_of_the_identified_rows():
    X, W, L = _block(12, 5, 3)
    L[6:, 2:] = np.nan  # underflowed: two known entries left in these rows

    est, gammas, spread, how, _ = multilaterate_unknown_gamma(L, W)

    assert how == IDENTIFIED and np.allclose(gammas, 2.5)
    assert np.abs(est[:6] - X[:6]).max() < 1e-9 and np.all(spread[6:] > 0)


def _attack(m):
    result = run(RunConfig(protocol="fedcg-naive", dataset="iris",
                           partition="hybrid:cohorts=2,groups=2,centres=per-cohort",
                           params={"landmark_method": "U"},
                           defenses=[("few-landmarks", {"m": m})], backend="plain"))
    view = build_view(result.transcript, "server", result.private)
    reconstruction = create("attack", "multilateration", {"unknown_gamma": True}).run(view)
    return reconstruction, create("scorer", "point-recovery").score(reconstruction,
                                                                     result.private)


def test_the_attack_with_d_plus_1_landmarks_and_an_unknown_width_is_exact():
    reconstruction, scores = _attack(3)  # iris: two features per group here

    assert scores["fraction_recovered"] == 1.0
    assert set(reconstruction.info["width_from"].values()) == {SHARED}
    assert "not_identifiable" not in reconstruction.info


def test_the_attack_below_reports_its_best_estimate_as_not_identifiable():
    reconstruction, scores = _attack(2)

    assert scores["n_targets"] == 4 and scores["advantage"] > 0.1
    assert len(reconstruction.info["not_identifiable"]["mean_spread"]) == 4
    assert "width" in reconstruction.info["not_identifiable"]["why"]
