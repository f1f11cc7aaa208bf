"""NRI-DC end to end: what travels, what is kept, how close to the central model."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.protocols.nri_dc import maths, tags
from fedsec.protocols.nri_dc.protocol import MASTER
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run

NriDc = Callable[..., RunResult]  # the `nri_dc` fixture (tests/conftest.py)

WORKERS = [f"party{i}" for i in range(1, 14)]


def test_messages_follow_algorithm_1_and_the_master_never_sees_the_anchor(nri_dc: NriDc) -> None:
    result = nri_dc()
    messages = result.transcript.messages
    by_tag: dict[str, list] = {}
    for m in messages:
        by_tag.setdefault(m.tag, []).append(m)
    assert len(by_tag[tags.ANCHOR]) == 12
    assert {(m.sender, m.receiver) for m in by_tag[tags.ANCHOR]} == {
        ("party1", w) for w in WORKERS[1:]}
    for tag in (tags.INTERMEDIATE, tags.ANCHOR_REPRESENTATION, tags.LABELS):
        assert sorted(m.sender for m in by_tag[tag]) == sorted(WORKERS)
        assert {m.receiver for m in by_tag[tag]} == {MASTER}
    assert {m.receiver for m in by_tag[tags.ANCHOR_PREDICTIONS]} == set(WORKERS)
    assert all(m.receiver != MASTER for m in by_tag[tags.ANCHOR])
    shapes = {m.tag: m.payload.shape for m in messages if m.sender == "party2"}
    assert shapes[tags.INTERMEDIATE] == (50, 6) and shapes[tags.ANCHOR_REPRESENTATION] == (2000, 6)


def test_workers_keep_only_their_permutation_never_their_map(nri_dc: NriDc) -> None:
    result = nri_dc()
    for worker in WORKERS:
        held = {k for k in result.private if k.startswith(f"party/{worker}/")}
        drawn = {f"party/{worker}/value/{tags.PRIVATE_ANCHOR}"} if worker == "party1" else set()
        assert held == {f"party/{worker}/shard/cell0/{n}" for n in
                        ("X", "y", "rows", "columns", "cohort", "group")} | {
            f"party/{worker}/value/shared_rows"} | drawn  # the anchor's owner keeps it
        rows = result.private[f"party/{worker}/value/shared_rows"]
        assert sorted(rows.tolist()) == list(range(50)) and rows.tolist() != list(range(50))
    # no outcome of the protocol: only the run's held-out records (the auxiliary population)
    assert {k for k in result.private if k.startswith("outcome/")} == {
        "outcome/auxiliary/X", "outcome/auxiliary/y"}
    assert not any(k.startswith(f"party/{MASTER}/value") for k in result.private)


def test_shared_rows_are_the_permuted_images_and_labels(nri_dc: NriDc) -> None:
    result = nri_dc(params={"n_components": 8})
    X = result.private["party/party4/shard/cell0/X"]
    y = result.private["party/party4/shard/cell0/y"]
    rows = result.private["party/party4/value/shared_rows"]
    sent = {m.tag: m.payload for m in result.transcript.messages if m.sender == "party4"}
    # with m_tilde = m the map is orthogonal: the Gram matrix of the shared rows is the data's
    np.testing.assert_allclose(sent[tags.INTERMEDIATE] @ sent[tags.INTERMEDIATE].T,
                               X[rows] @ X[rows].T, atol=1e-9)
    np.testing.assert_array_equal(sent[tags.LABELS], y[rows])


def test_collaboration_is_close_to_central_and_beats_local(nri_dc: NriDc) -> None:
    result = nri_dc()
    metrics = result.outcome.metrics
    central = result.reference.metrics["roc_auc"]
    assert result.record.comparison.agrees
    assert abs(metrics["roc_auc"] - central) < 0.05
    assert metrics["roc_auc"] > metrics["local_roc_auc"]
    assert metrics["n_workers"] == 13 and metrics["n_components"] == 6


def test_ls_and_gep_scale_artefact_and_its_correction(nri_dc: NriDc) -> None:
    opp = nri_dc().outcome.metrics["roc_auc"]
    for method in ("ls", "gep"):
        paper = nri_dc(params={"collab": method, "rescale": False}).outcome.metrics
        fixed = nri_dc(params={"collab": method}).outcome.metrics
        assert paper["roc_auc"] == pytest.approx(0.5)  # constant predictions on the anchor
        assert fixed["roc_auc"] == pytest.approx(opp, abs=0.02)
        assert fixed["collab_scale"] > 10


@pytest.mark.parametrize(("method", "optimizer"),
                         [("gopp", "rbfgs"), ("rdp", "rbfgs"), ("rdp", "lbfgs")])
def test_iterative_collaboration_functions_run_in_the_protocol(nri_dc: NriDc, method: str,
                                                               optimizer: str) -> None:
    metrics = nri_dc(params={"collab": method, "n_anchor": 500,
                             "rdp_optimizer": optimizer}).outcome.metrics
    assert metrics["collab_iterations"] >= 1 and metrics["collab_converged"]
    assert metrics["roc_auc"] > metrics["local_roc_auc"] - 0.02


@pytest.mark.parametrize("model", ["mlp", "random-forest"])
def test_other_models(nri_dc: NriDc, model: str) -> None:
    result = nri_dc(params={"model": model, "n_anchor": 300},
                    partition="horizontal:parties=4,size=50")
    assert 0.6 < result.outcome.metrics["roc_auc"] <= 1.0
    assert 0.6 < result.reference.metrics["roc_auc"] <= 1.0


def test_public_and_uniform_anchors(nri_dc: NriDc) -> None:
    public = nri_dc(params={"anchor": "public", "anchor_dataset": "pima", "n_anchor": 500})
    uniform = nri_dc(params={"anchor": "uniform", "n_anchor": 500}, scaling="minmax")
    assert public.outcome.metrics["roc_auc"] > 0.7
    assert uniform.outcome.metrics["roc_auc"] > 0.7


def test_epsilon_dr_certificate_and_downsampling_defence(nri_dc: NriDc) -> None:
    checked = nri_dc(params={"dr_epsilon": 0.3}).outcome.metrics
    defended = nri_dc(defenses=(("epsilon-dr-downsampling", {"epsilon": 0.3}),))
    metrics = defended.outcome.metrics
    assert not checked["dr_passed"] and checked["dr_margin"] < 0
    assert checked["dr_fraction_violating"] == pytest.approx(metrics["dr_fraction_dropped"])
    assert 0 < metrics["dr_fraction_dropped"] < 0.5
    assert metrics["dr_passed_after"] and metrics["dr_margin_after"] >= 0
    # the cost in accuracy of dropping those samples stays small
    assert metrics["roc_auc"] > checked["roc_auc"] - 0.03
    n_shared = sum(m.payload.shape[0] for m in defended.transcript.messages
                   if m.tag == tags.INTERMEDIATE)
    assert n_shared == round(650 * (1 - metrics["dr_fraction_dropped"]))


def test_share_erases_the_map_and_downsamples_exactly_the_violators() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 5))
    y = rng.integers(0, 2, 30)
    anchor = rng.standard_normal((40, 5))
    out = maths.share(X, y, anchor, 3, sigma=0.1, rng=np.random.default_rng(1), dr_epsilon=0.8,
                      downsample=True)
    F = np.linalg.lstsq(anchor, out.anchor, rcond=None)[0]
    errors = maths.dr_errors(X, F)
    assert set(out.rows.tolist()) == set(np.flatnonzero(errors >= 0.8).tolist())
    np.testing.assert_allclose(out.intermediate, X[out.rows] @ F, atol=1e-10)
    assert out.certificate["n_dropped"] == int((errors < 0.8).sum()) > 0
    assert not hasattr(out, "map") and set(vars(out)) == {
        "intermediate", "anchor", "labels", "rows", "certificate"}


def test_bad_parameters_raise() -> None:
    for bad in ({"collab": "pca"}, {"sigma": -1.0}, {"n_anchor": 0}, {"model": "svm"},
                {"anchor": "public"}, {"anchor_dataset": "pima"}, {"rescale": 1},
                {"dr_downsample": True}, {"rdp_init": "gep"}, {"rdp_weight": 0.0},
                {"rdp_optimizer": "adam"}):
        with pytest.raises(ValidationError):
            create("protocol", "nri-dc", bad)
    with pytest.raises(ValidationError, match="n_components"):
        run(RunConfig(protocol="nri-dc", params={"n_components": 9}))
    with pytest.raises(ValidationError, match="horizontal"):
        run(RunConfig(protocol="nri-dc", partition="vertical:parties=2"))
    with pytest.raises(ValidationError):
        create("defense", "epsilon-dr-downsampling", {"epsilon": 0.0})
