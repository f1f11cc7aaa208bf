"""The FedCG geometry attacks say how they ended: completions report convergence, the closed
forms declare it, and multilateration below d + 1 names the estimate each block kept."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.attacks.fedcg.below_hull import HULL, PRIOR, place_points
from fedsec.convergence import Convergence
from fedsec.registry import create, get
from fedsec.runner import RunConfig, run
from fedsec.views import build_view

HYBRID = "hybrid:cohorts=2,groups=2,centres=per-cohort"


def attack(result, name, threat="server", **params):
    view = build_view(result.transcript, threat, result.private)
    reconstruction = create("attack", name, params).run(view)
    return reconstruction, create("scorer", "point-recovery").score(reconstruction,
                                                                    result.private)


def fedcg(dataset="iris", partition=HYBRID, **params):
    defenses = params.pop("defenses", [])
    return run(RunConfig(protocol="fedcg-naive", dataset=dataset, partition=partition,
                         params=params, defenses=defenses, reference=False))


@pytest.mark.parametrize(("method", "stopped"), [("alternating-descent", "converged"),
                                                 ("nystrom", "closed-form"),
                                                 ("rank-alternation", None)])
def test_edm_completion_reports_convergence_over_its_blocks(method, stopped):
    result = fedcg(landmark_method="U", n_landmarks=12)

    reconstruction, _ = attack(result, "edm-completion", method=method, max_iter=50)

    record = Convergence.from_info(reconstruction.info["convergence"])
    assert record.runs == reconstruction.info["blocks"] == 4
    assert stopped is None or record.stopped == stopped
    if method != "nystrom":
        assert record.history and record.budget == 50


def test_edm_completion_names_the_sdr_solver_auto_chose():
    result = fedcg(landmark_method="U", n_landmarks=12)

    reconstruction, _ = attack(result, "edm-completion", method="sdr", max_iter=2000)

    assert set(reconstruction.info["sdr_solver"].values()) == {"SCS"}  # blocks of ~60 points
    assert reconstruction.info["convergence"]["runs"] == 4


@pytest.mark.parametrize("name", ["multilateration", "gram-inference"])
def test_closed_form_attacks_say_so(name):
    assert get("attack", name).closed_form is True
    assert get("attack", "edm-completion").closed_form is False


def test_the_prior_is_kept_by_its_own_fit_where_the_points_lie_off_the_landmarks_hull():
    rng = np.random.default_rng(0)
    W = rng.uniform(0.0, 0.3, size=(3, 6))  # three landmarks in a corner of the unit box
    X = np.clip(rng.normal(0.6, 0.1, size=(200, 6)), 0.0, 1.0)
    D = ((X[:, None] - W[None]) ** 2).sum(-1)

    chosen = place_points(D, W)
    hull = place_points(D, W, estimator=HULL)

    assert chosen.below[0]["estimator"] == PRIOR
    assert chosen.below[0]["likelihood_ratio"] > 3.84
    error = np.linalg.norm(chosen.points - X, axis=1).mean()
    assert error < 0.5 * np.linalg.norm(hull.points - X, axis=1).mean()
    np.testing.assert_array_equal(chosen.spread, hull.spread)


def test_the_hull_projection_is_kept_where_the_points_surround_the_hull():
    rng = np.random.default_rng(1)
    W = np.zeros((3, 5))
    W[1, 0], W[2, 1] = 1.0, 1.0  # the plane of the first two axes
    X = rng.normal(0.0, 0.3, size=(300, 5))  # spread evenly on both sides of it
    D = ((X[:, None] - W[None]) ** 2).sum(-1)

    chosen = place_points(D, W)

    assert chosen.below[0]["estimator"] == HULL
    np.testing.assert_array_equal(chosen.points, place_points(D, W, estimator=HULL).points)


def test_multilateration_records_the_estimate_kept_per_block():
    result = fedcg(landmark_method="U", defenses=[("few-landmarks", {"m": 1})])

    reconstruction, scores = attack(result, "multilateration")
    forced, _ = attack(result, "multilateration", below_hull=HULL)

    kept = reconstruction.info["below_hull"]
    assert len(kept) == 4 and all(r[0]["estimator"] in (HULL, PRIOR) for r in kept.values())
    assert {r[0]["estimator"] for r in forced.info["below_hull"].values()} == {HULL}
    assert scores["advantage"] >= 0.0


@pytest.mark.slow
def test_edm_completion_completes_a_thousand_points_by_default():
    result = fedcg(dataset="classification:n_samples=1340,n_features=6",
                   partition="hybrid:cohorts=1,groups=1", landmark_method="U",
                   n_landmarks=50)

    reconstruction, scores = attack(result, "edm-completion", method="sdr")

    (key,) = reconstruction.estimates
    assert result.private[key].shape[0] >= 1000
    assert reconstruction.info["sdr_solver"][key] == "burer-monteiro"
    assert reconstruction.info["convergence"]["stopped"] == "converged"
    assert scores["distance_error"] < 1e-6
