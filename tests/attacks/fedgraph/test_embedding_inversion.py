"""Embedding inversion on FedGraph: every row found again through a one-layer extractor, with
its convergence reported; depth does not stop the converged attack; not applicable without
the extractor; the scorer's baselines."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.attacks.fedgraph.embedding_inversion import EmbeddingInversion
from fedsec.errors import ValidationError
from fedsec.plan import RunConfig
from fedsec.runner import run
from fedsec.scoring.pixels import PixelRecovery
from fedsec.views import build_view

pytest.importorskip("torch")

SMALL = {"hidden": 64, "layers": 5, "epochs": 10, "gcn_epochs": 5, "compare": False,
         "clustering": "none"}


def run_at(depth: int) -> object:
    return run(RunConfig(protocol="fedgraph", partition="random:parties=3,features=0.1",
                         params={**SMALL, "depth": depth}, test_size=100))


def test_a_one_layer_extractor_gives_every_row_back_and_says_it_converged() -> None:
    result = run_at(1)
    view = build_view(result.transcript, "server,party1", result.private)
    rec = EmbeddingInversion(max_rows=60).run(view)
    assert len(rec.estimates) == 2  # the test rows and the raw training rows
    score = PixelRecovery().score(rec, result.private)["per_target"]
    test = score["party/party1/value/inputs/test"]
    # 64 units under 78 inputs: even one layer is not injective, yet every row is found again.
    assert test["reidentified"] > 0.95 and test["psnr"] > test["baseline_psnr"] + 10
    train = score["party/party1/value/inputs/train"]
    assert train["reidentified"] > 0.9  # from zero alone: the own rows never start it
    convergence = rec.info["convergence"]
    assert convergence["converged"] is True and convergence["runs"] == 2
    assert sum(rec.info["starts_kept"].values()) == 120
    assert convergence["steps"] < 1000  # every row stopped before the budget


def test_a_starved_inversion_is_reported_as_such() -> None:
    result = run_at(2)
    view = build_view(result.transcript, "server,party1", result.private)
    rec = EmbeddingInversion(steps=2, starts="zero", max_rows=30, sources="test").run(view)
    assert rec.info["convergence"]["stopped"] == "budget"
    assert rec.info["convergence"]["more_budget_helps"] is True


@pytest.mark.slow
def test_five_layers_do_not_hide_the_rows_from_the_converged_attack() -> None:
    result = run_at(5)
    view = build_view(result.transcript, "server,party1", result.private)
    full = PixelRecovery().score(EmbeddingInversion(max_rows=60, sources="test").run(view),
                                 result.private)
    zero = PixelRecovery().score(EmbeddingInversion(max_rows=60, sources="test",
                                                    starts="zero").run(view), result.private)
    assert full["reidentified"] > 0.9 and full["advantage"] > 0.8
    assert full["reidentified"] >= zero["reidentified"]


def test_the_server_alone_holds_no_extractor_so_the_attack_does_not_apply() -> None:
    result = run(RunConfig(protocol="fedgraph", partition="random:parties=2,features=0.1",
                           params={**SMALL, "depth": 1, "epochs": 1}, test_size=50))
    reason = EmbeddingInversion().not_applicable(build_view(result.transcript, "server",
                                                            result.private))
    assert reason is not None and "server,party1" in reason


def test_bad_starts_are_refused() -> None:
    with pytest.raises(ValidationError, match="starts"):
        EmbeddingInversion(starts="nearest:0,zero")


def test_an_uninformed_guess_scores_at_chance() -> None:
    rng = np.random.default_rng(0)
    truth = rng.uniform(-1, 1, size=(80, 50))
    from fedsec.outcomes import Reconstruction

    guess = rng.uniform(-1, 1, size=truth.shape)
    rec = Reconstruction(attack="demo", threat="server", estimates={"party/a/value/x": guess},
                         baseline={"party/a/value/x": np.repeat(guess.mean(0, keepdims=True),
                                                                80, 0)})
    score = PixelRecovery().score(rec, {"party/a/value/x": truth})
    assert score["reidentified"] <= 0.05 and score["advantage"] < 0.0
    exact = Reconstruction(attack="demo", threat="server", estimates={"party/a/value/x": truth},
                           baseline={})
    assert PixelRecovery().score(exact, {"party/a/value/x": truth})["reidentified"] == 1.0
