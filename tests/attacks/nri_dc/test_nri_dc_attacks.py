"""The pseudoinverse attack on NRI-DC: exact under collusion, baseline for the master alone."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.attacks.nri_dc.pinv_reconstruction import estimate_map, invert
from fedsec.errors import CapabilityError
from fedsec.protocols.nri_dc import maths, tags
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run
from fedsec.scoring.rows import match_rows
from fedsec.views import build_view

NriDc = Callable[..., RunResult]  # the `nri_dc` fixture (tests/conftest.py)


def attack(result, threat: str, scorer: str = "matched-rows", **scorer_params):
    view = build_view(result.transcript, threat, result.private)
    reconstruction = create("attack", "pinv-reconstruction").run(view)
    return reconstruction, create("scorer", scorer, scorer_params).score(reconstruction,
                                                                         result.private)


def low_rank(seed: int, rank: int, n_rows: int = 40, n_features: int = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_rows, rank)) @ rng.standard_normal((rank, n_features))


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 5), st.integers(0, 10_000))
def test_collusion_recovers_rank_deficient_data_exactly_without_perturbation(rank: int,
                                                                            seed: int) -> None:
    X = low_rank(seed, rank)
    rng = np.random.default_rng(seed + 1)
    anchor = rng.standard_normal((100, 6))
    out = maths.share(X, np.zeros(40), anchor, rank, sigma=0.0, rng=rng)
    X_hat = invert(out.intermediate, estimate_map(anchor, out.anchor))
    error = np.linalg.norm(X_hat - X[out.rows]) / np.linalg.norm(X)
    assert error < 1e-10


def test_perturbation_tilts_the_subspace_but_does_not_hide_the_map() -> None:
    X = low_rank(0, 3)
    anchor = np.random.default_rng(1).standard_normal((100, 6))
    errors = []
    for sigma in (0.0, 0.05, 0.5):
        out = maths.share(X, np.zeros(40), anchor, 3, sigma=sigma, rng=np.random.default_rng(2))
        F_hat = estimate_map(anchor, out.anchor)
        np.testing.assert_allclose(anchor @ F_hat, out.anchor, atol=1e-10)  # F recovered exactly
        X_hat = invert(out.intermediate, F_hat)
        errors.append(np.linalg.norm(X_hat - X[out.rows]) / np.linalg.norm(X))
        # the attack's per-sample error is exactly the worker's epsilon-DR error
        np.testing.assert_allclose(np.linalg.norm(X_hat - X[out.rows], axis=1),
                                   maths.dr_errors(X, F_hat)[out.rows], atol=1e-10)
    assert errors[0] < 1e-10 < errors[1] < errors[2] < 0.5


def test_worker_with_master_recovers_every_other_worker_and_reidentifies_rows(
        nri_dc: NriDc) -> None:
    result = nri_dc(params={"n_components": 8, "sigma": 0.5})
    reconstruction, scores = attack(result, "master,party1")
    assert reconstruction.info["anchor_observed"]
    assert len(reconstruction.info["workers_attacked"]) == scores["n_targets"] == 12
    assert "party/party1/shard/cell0/X" not in reconstruction.estimates
    assert scores["set_error"] < 1e-10 and scores["fraction_recovered"] == 1.0
    assert scores["reidentified"] == 1.0 and scores["label_accuracy"] == 1.0
    assert scores["baseline_reidentified"] < 0.1 and scores["advantage"] > 0.999


def test_reduced_dimension_leaves_a_residual_and_rows_beyond_a_random_projection(
        nri_dc: NriDc) -> None:
    result = nri_dc()
    _, scores = attack(result, "master,party5")
    assert 0.05 < scores["set_error"] < 0.5 and scores["advantage"] > 0.5
    # Nearest record among the victim's: most rows, well above what a random projection of
    # the same rank gives (the worker's map keeps the data's main directions).
    assert scores["reidentified"] > 0.9 and scores["label_accuracy"] > 0.95
    assert scores["reidentified"] > scores["projection_reidentified"] + 0.1
    _, everyone = attack(result, "master,party5", pool="federation")
    assert everyone["chance_reidentified"] < 0.002 and everyone["pool_size"] == 650
    assert everyone["projection_reidentified"] < everyone["reidentified"] < scores["reidentified"]
    # An auxiliary population: the victim's 50 records among the 100 held-out test records.
    _, outsiders = attack(result, "master,party5", pool="auxiliary")
    assert outsiders["pool_size"] == 150 and outsiders["chance_reidentified"] == 1 / 150
    assert (outsiders["projection_reidentified"] < outsiders["reidentified"]
            <= scores["reidentified"])
    # Optimal assignment gives every row of any exact projection back: no evidence.
    _, assigned = attack(result, "master,party5", rule="assignment")
    assert assigned["reidentified"] == assigned["projection_reidentified"] == 1.0
    _, dr = attack(result, "master,party5", "epsilon-dr", epsilon=0.1)
    assert not dr["passed"] and 0 < dr["fraction_violating"] < 0.1


def test_eavesdropper_without_tls_needs_the_anchor_link(nri_dc: NriDc) -> None:
    result = nri_dc()
    reconstruction, scores = attack(result, "eavesdropper:*")
    assert scores["n_targets"] == 13 and scores["reidentified"] > 0.9
    assert scores["reidentified"] > scores["projection_reidentified"] + 0.1
    reconstruction, scores = attack(result, "eavesdropper:party2->master")
    assert not reconstruction.info["anchor_observed"]
    assert scores["advantage"] == 0.0
    reconstruction, scores = attack(result, "eavesdropper:party1->party2,party2->master")
    assert reconstruction.info["workers_attacked"] == ["party2"]
    assert scores["reidentified"] > 0.9


def test_master_alone_is_at_the_naive_baseline(nri_dc: NriDc) -> None:
    result = nri_dc()
    reconstruction, scores = attack(result, "master")
    assert not reconstruction.info["anchor_observed"]
    assert scores["n_targets"] == 13
    assert scores["set_error"] == scores["baseline_set_error"] and scores["advantage"] == 0.0
    assert scores["reidentified"] < 0.1


def test_what_the_master_alone_does_learn_distances_in_an_unknown_frame(nri_dc: NriDc) -> None:
    # F_i has orthonormal columns: the shared rows keep the records' projected geometry
    result = nri_dc()
    X = result.private["party/party3/shard/cell0/X"]
    rows = result.private["party/party3/value/shared_rows"]
    shared = next(m.payload for m in result.transcript.messages
                  if m.sender == "party3" and m.tag == tags.INTERMEDIATE)

    def distances(Y: np.ndarray) -> np.ndarray:
        return np.linalg.norm(Y[:, None] - Y[None], axis=-1)

    gap = np.linalg.norm(distances(shared) - distances(X[rows])) / np.linalg.norm(distances(X))
    assert gap < 0.15  # six of eight dimensions kept: most of the geometry is visible
    # but not the orientation: the rows themselves are far from the records
    assert np.linalg.norm(shared - X[rows][:, :6]) / np.linalg.norm(X) > 0.5


def test_downsampled_rows_satisfy_epsilon_dr_against_the_attack(nri_dc: NriDc) -> None:
    result = nri_dc(defenses=(("epsilon-dr-downsampling", {"epsilon": 0.3}),))
    reconstruction, _ = attack(result, "master,party1")
    for worker in ("party2", "party7"):
        key = f"party/{worker}/shard/cell0/X"
        rows = result.private[f"party/{worker}/value/shared_rows"]
        X = result.private[key]
        errors = np.linalg.norm(reconstruction.estimates[key] - X[rows], axis=1)
        assert rows.size < 50 and errors.min() >= 0.3


def test_a_worker_alone_attacks_nobody_and_other_protocols_do_not_apply(nri_dc: NriDc) -> None:
    reconstruction, scores = attack(nri_dc(), "party4")
    assert reconstruction.estimates == {} and scores["n_targets"] == 0
    other = run(RunConfig(protocol="secure-sum", dataset="iris"))
    view = build_view(other.transcript, "aggregator", other.private)
    with pytest.raises(CapabilityError, match=r"nri_dc\.intermediate"):
        create("attack", "pinv-reconstruction").run(view)


def test_matching_pairs_permuted_rows() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    order = rng.permutation(20)
    assert match_rows(X[order] + 1e-3, X).tolist() == order.tolist()
    assert match_rows(X[order[:5]], X).tolist() == order[:5].tolist()
