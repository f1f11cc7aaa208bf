"""The attacks on FedCG: succeed undefended, fall to the baseline when defended."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import CapabilityError, ValidationError
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.views import build_view

HYBRID = "hybrid:cohorts=2,groups=2,centres=per-cohort"


def attack(result, name: str, threat: str, scorer: str = "point-recovery", **params):
    view = build_view(result.transcript, threat, result.private)
    reconstruction = create("attack", name, params).run(view)
    return reconstruction, create("scorer", scorer).score(reconstruction, result.private)


def fedcg(protocol: str = "fedcg-naive", **params):
    defenses = params.pop("defenses", [])
    backend = params.pop("backend", "plain")
    return run(RunConfig(protocol=protocol, dataset="iris", partition=HYBRID, params=params,
                         defenses=defenses, backend=backend, secret_seed=0))


def test_server_with_the_seed_recovers_every_cell_from_naive_blocks() -> None:
    result = fedcg(landmark_method="U")
    _, scores = attack(result, "multilateration", "server")
    assert scores["n_targets"] == 4
    assert scores["point_error"] < 1e-8 and scores["fraction_recovered"] == 1.0
    assert scores["baseline_fraction_recovered"] < 0.2 and scores["advantage"] > 0.99


def test_random_widths_do_not_stop_a_seed_holder() -> None:
    result = fedcg(landmark_method="U", defenses=[("random-kernel-width", {"jitter": 1.0})])
    _, scores = attack(result, "multilateration", "server")
    assert scores["fraction_recovered"] == 1.0


def test_without_the_seed_the_server_has_no_landmarks() -> None:
    result = fedcg(landmark_method="U", server_knows_seed=False)
    reconstruction, _ = attack(result, "multilateration", "server")
    assert reconstruction.info["blocks_seen"] == 4 and reconstruction.info["blocks_attacked"] == 0


def test_too_few_landmarks_leave_points_unidentifiable_yet_partly_known() -> None:
    # iris has two features per group here: two landmarks leave two mirror positions per
    # point (the unit box picks one), one landmark a whole circle (its centre is the landmark,
    # unless a prior fitted to the distances pulls the points towards the box's centre)
    result = fedcg(landmark_method="U", defenses=[("few-landmarks", {"m": 2})])
    reconstruction, scores = attack(result, "multilateration", "server")
    assert scores["fraction_recovered"] < 0.5 and scores["advantage"] > 0.3
    spread = reconstruction.info["not_identifiable"]["mean_spread"]
    assert len(spread) == 4 and all(s > 0.1 for s in spread.values())
    result = fedcg(landmark_method="U", defenses=[("few-landmarks", {"m": 1})])
    _, scores = attack(result, "multilateration", "server", below_hull="affine-hull")
    assert scores["advantage"] == pytest.approx(0.0, abs=1e-9)  # nothing beyond the baseline
    _, scores = attack(result, "multilateration", "server")  # the prior, where it fits better
    assert 0.0 < scores["advantage"] < 0.2


def test_unknown_common_width_is_identified_with_enough_landmarks() -> None:
    result = fedcg(landmark_method="U")
    _, scores = attack(result, "multilateration", "server", unknown_gamma=True)
    assert scores["fraction_recovered"] == 1.0


def test_secure_chain_leaks_the_previous_owner_to_the_next() -> None:
    result = fedcg("fedcg-secure", landmark_method="U")
    reconstruction, scores = attack(result, "multilateration", "hospital1")
    assert set(reconstruction.estimates) == {"party/centre1_1/shard/cell0/X"}
    assert scores["point_error"] < 1e-6
    with pytest.raises(CapabilityError, match=r"no message tagged fedcg\.chain_product or"):
        attack(result, "multilateration", "server")


def test_gram_inference_per_cohort_in_clear_total_under_masks() -> None:
    plain = fedcg("fedcg-secure")
    reconstruction, scores = attack(plain, "gram-inference", "server", "reconstruction-error")
    assert set(reconstruction.estimates) == {"outcome/gram/cohort0", "outcome/gram/cohort1"}
    # the CG directions span 45 of the 50 dimensions here; the rest is left at minimum norm
    assert scores["relative_error"] < 1e-4 and scores["advantage"] > 0.9999
    masked = fedcg("fedcg-secure", backend="noise")
    reconstruction, scores = attack(masked, "gram-inference", "server", "reconstruction-error")
    assert set(reconstruction.estimates) == {"outcome/gram/total"}
    assert scores["relative_error"] < 1e-4


def test_kernel_distances_treat_underflow_as_missing() -> None:
    from fedsec.attacks.fedcg.multilateration import kernel_distances, multilaterate

    W = np.random.default_rng(0).random((6, 2))
    x = np.array([[0.2, 0.9]])
    K = np.exp(-((x[:, None] - W[None]) ** 2).sum(-1))
    K[0, :2] = 0.0  # underflowed entries
    D = kernel_distances(K, 1.0)
    assert np.isnan(D[0, :2]).all()
    np.testing.assert_allclose(multilaterate(D, W), x, atol=1e-10)


@pytest.mark.parametrize(("method", "bound"), [("nystrom", 1e-8), ("alternating-descent", 0.05)])
def test_edm_completion_recovers_the_hidden_distances(method: str, bound: float) -> None:
    result = fedcg(landmark_method="U", n_landmarks=12)
    reconstruction, scores = attack(result, "edm-completion", "server", method=method,
                                    max_iter=300)
    assert all(reconstruction.info["landmark_distances_known"].values())
    assert scores["distance_error"] < bound < scores["baseline_distance_error"]


def test_edm_completion_sdr_solvers_agree_when_the_landmarks_span_the_space() -> None:
    result = fedcg(landmark_method="U", n_landmarks=12)
    _, scs = attack(result, "edm-completion", "server", method="sdr", max_iter=20_000)
    _, low_rank = attack(result, "edm-completion", "server", method="sdr",
                         sdr_solver="burer-monteiro")
    assert low_rank["distance_error"] < 1e-6
    assert low_rank["distance_error"] <= scs["distance_error"] < 1e-2


def test_edm_completion_refuses_an_sdr_solver_for_another_method() -> None:
    with pytest.raises(ValidationError, match="'sdr_solver' parameter"):
        create("attack", "edm-completion", {"method": "nystrom", "sdr_solver": "SCS"})


def test_p_landmarks_give_themselves_away_without_the_seed() -> None:
    result = fedcg(server_knows_seed=False)  # P landmarks: training rows
    reconstruction, scores = attack(result, "multilateration", "server")
    assert "classical MDS frame" in next(iter(reconstruction.info["methods"].values()))
    assert scores["distance_error"] < 1e-6 and scores["fraction_recovered"] == 1.0


def test_the_nystrom_formula_without_landmark_distances_does_not_apply() -> None:
    result = run(RunConfig(protocol="fedcg-naive", dataset="iris", params={"n_landmarks": 5}))
    with pytest.raises(CapabilityError, match="Nyström formula needs the landmark distances"):
        attack(result, "edm-completion", "server", method="nystrom")
