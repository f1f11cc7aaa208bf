"""V-FedMV's 'leak nothing' claim, tested: each attack succeeds undefended, falls to its
baseline under a mask or when the view has more features than rows."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from fedsec.attacks.fedmv.subspace import accumulate
from fedsec.errors import ValidationError
from fedsec.private_store import shard_key
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run
from fedsec.scoring.subspace import align_known_rows, basis, captured
from fedsec.testing import check_attack
from fedsec.views import build_view

SMALL = "mfeat:views=zer+mor"  # zer: 47 features, mor: 6; 10 classes; 1,500 training rows


@cache
def vertical(dataset: str = SMALL, backend: str = "plain") -> RunResult:
    return run(RunConfig(protocol="v-fedmv", dataset=dataset, backend=backend))


def score(result: RunResult, attack: str, threat: str, scorer: str, **params: str):
    view = build_view(result.transcript, threat, result.private)
    reconstruction = create("attack", attack, dict(params)).run(view)
    return reconstruction, create("scorer", scorer).score(reconstruction, result.private)


def test_the_server_recovers_each_views_column_space_within_d_over_c_rounds() -> None:
    result = vertical()
    reconstruction, scores = score(result, "subspace-accumulation", "server", "column-space")
    assert scores["captured"] > 1 - 1e-9 and scores["largest_angle"] < 0.1
    assert scores["baseline_captured"] < 0.5 and scores["advantage"] > 0.999
    # what the span already gives: leverage scores and whitened nearest neighbours
    assert scores["leverage_error"] < 1e-5 < scores["baseline_leverage_error"]
    assert scores["same_neighbours"] > 0.95 > 0.1 > scores["baseline_same_neighbours"]
    ranks = reconstruction.info["rank_by_round"]
    zer = next(c for c in ranks if c != "party2")  # party1 holds zer (47 features), party2 mor
    assert ranks[zer][:5] == [10, 20, 30, 40, 47]  # C = 10 new directions a round: ceil(47/10)
    assert ranks["party2"][0] == 6


def test_known_rows_beyond_the_rank_give_every_row(tmp_path: Path) -> None:
    result = vertical()
    X = np.asarray(result.private[shard_key("party1", 0, "X")])
    rng = np.random.default_rng(0)
    for m, exact in ((X.shape[1] + 5, True), (X.shape[1] // 2, False)):
        rows = rng.choice(X.shape[0], m, replace=False)
        path = tmp_path / f"known{m}.npz"
        np.savez(path, **{"party1/rows": rows, "party1/X": X[rows]})
        _, scores = score(result, "known-record-alignment", "server", "reconstruction-error",
                          records=str(path))
        error = scores["per_target"][shard_key("party1", 0, "X")]["relative_error"]
        assert (error <= 1e-6) if exact else (error > 1e-2), (m, error)


def test_test_rows_follow_exactly_where_a_view_has_no_more_features_than_classes(
        tmp_path: Path) -> None:
    result = vertical()
    rng = np.random.default_rng(1)
    known = {}
    for party in ("party1", "party2"):
        X = np.asarray(result.private[shard_key(party, 0, "X")])
        rows = rng.choice(X.shape[0], X.shape[1] + 5, replace=False)
        known.update({f"{party}/rows": rows, f"{party}/X": X[rows]})
    np.savez(tmp_path / "known.npz", **known)
    reconstruction, scores = score(result, "test-inference", "server", "reconstruction-error",
                                   records=str(tmp_path / "known.npz"))
    assert reconstruction.info["exact_by_equations"] == {"party1": False, "party2": True}
    mor = scores["per_target"]["party/party2/value/test_X"]  # 6 features <= 10 classes: exact
    zer = scores["per_target"]["party/party1/value/test_X"]  # 47 features: a prior fills in
    assert mor["relative_error"] < 1e-8 < mor["baseline_relative_error"]
    assert zer["relative_error"] < zer["baseline_relative_error"]


def test_under_a_mask_the_server_reads_no_view_estimate() -> None:
    masked = vertical(backend="noise")
    view = build_view(masked.transcript, "server", masked.private)
    reason = create("attack", "subspace-accumulation").not_applicable(view)
    assert reason is not None and "protects them" in reason


def test_a_view_wider_than_its_rows_gives_nothing_beyond_the_baseline() -> None:
    nutrimouse = vertical("nutrimouse")  # gene: 120 features, 30 training rows
    _, scores = score(nutrimouse, "subspace-accumulation", "server", "column-space")
    gene = scores["per_target"][shard_key("party1", 0, "X")]
    assert gene["true_rank"] == 30 and gene["baseline_captured"] == pytest.approx(1.0)
    assert np.isnan(gene["advantage"])  # the whole row space: a random guess captures it too
    lipid = scores["per_target"][shard_key("party2", 0, "X")]
    assert lipid["advantage"] > 0.999  # 21 features < 30 rows: recovered


def test_the_label_holder_reads_the_joint_span_of_the_other_views() -> None:
    result = run(RunConfig(protocol="v-fedmv", dataset="mfeat:views=zer+mor+kar"))
    reconstruction, scores = score(result, "curious-client", "party1", "column-space")
    assert reconstruction.info["label_holder"] == "party1"
    assert scores["n_targets"] == 2 and scores["captured"] > 1 - 1e-9
    joint = next(iter(reconstruction.estimates.values()))
    assert joint.shape[1] == 6 + 64  # mor and kar, jointly
    assert abs(reconstruction.info["rank_by_round"][-1] - 70) <= 1  # the running count
    other = build_view(result.transcript, "party2", result.private)
    assert "holds no labels" in create("attack", "curious-client").not_applicable(other)
    # a mask hides only the sum's parts: the client replays its own estimates and still reads
    masked = run(RunConfig(protocol="v-fedmv", dataset="mfeat:views=zer+mor+kar",
                           backend="noise"))
    _, scores = score(masked, "curious-client", "party1", "column-space")
    assert scores["captured"] > 1 - 1e-6 and scores["advantage"] > 0.99


def test_basis_accumulation_and_alignment_on_synthetic_views() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 7))
    images = [X @ rng.normal(size=(7, 3)) for _ in range(4)]
    Q, ranks = accumulate(images)
    assert ranks == [3, 6, 7, 7] and Q.shape[1] == 7
    assert captured(Q, X) == pytest.approx(1.0)
    np.testing.assert_allclose(align_known_rows(Q, np.arange(9), X[:9]), X, atol=1e-10)
    assert basis(np.zeros((5, 2))).shape == (5, 0)


def test_conformance_and_a_missing_records_file() -> None:
    for name in ("subspace-accumulation", "curious-client"):
        check_attack(type(create("attack", name)))
    with pytest.raises(ValidationError, match="records=PATH"):
        create("attack", "known-record-alignment")
    view = build_view(vertical().transcript, "server", vertical().private)
    with pytest.raises(ValidationError, match="No known-records file"):
        create("attack", "known-record-alignment", {"records": "nope.npz"}).run(view)


def test_the_attack_runs_from_a_saved_transcript(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fedsec = [sys.executable, "-m", "fedsec.cli.main"]
    made = subprocess.run([*fedsec, "run", "v-fedmv", "--dataset", SMALL, "--out", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert made.returncode == 0, made.stderr
    attacked = subprocess.run([*fedsec, "attack", str(out / "transcript.arrow"), "--attack",
                               "subspace-accumulation", "--as", "server", "--truth", str(out),
                               "--json"], capture_output=True, text=True, timeout=300,
                              check=False)
    assert attacked.returncode == 0, attacked.stderr
    assert json.loads(attacked.stdout)["scores"]["captured"] > 1 - 1e-9


def test_with_two_h_fedmv_clients_each_reads_the_other_from_the_average() -> None:
    # beta = 0 and a tight local tolerance: each local loop ends at the client's own optimum
    result = run(RunConfig(protocol="h-fedmv", dataset=SMALL, partition="horizontal:parties=2",
                           params={"rounds": 3, "beta": 0.0, "tol": 1e-12, "max_rounds": 5000}))
    reconstruction, scores = score(result, "average-difference", "party1",
                                   "reconstruction-error")
    assert reconstruction.info["target"] == "party2"
    assert scores["relative_error"] < 1e-9 < scores["baseline_relative_error"]
    server = build_view(result.transcript, "server", result.private)
    assert "every client but one" in create("attack", "average-difference").not_applicable(server)


def test_zero_one_columns_are_found_without_any_known_row() -> None:
    result = vertical("heart:views=artificial")  # sex and fbs in history, exang in exercise_ecg
    _, scores = score(result, "binary-columns", "server", "binary-columns")
    assert scores["binary_columns"] == 3 and scores["recovered"] == 1.0
    assert scores["spurious"] == 0 and scores["baseline_recovered"] == 0.0
    imaging = scores["per_target"][shard_key("party3", 0, "X")]  # ca and thal: no 0/1 column
    assert imaging["binary_columns"] == 0
