"""Embedding inversion on FedGraph: every row found again through a one-layer extractor,
far fewer through five; not applicable without the extractor; the scorer's baselines."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.attacks.fedgraph.embedding_inversion import EmbeddingInversion
from fedsec.plan import RunConfig
from fedsec.runner import run
from fedsec.scoring.pixels import PixelRecovery
from fedsec.views import build_view

pytest.importorskip("torch")

SMALL = {"hidden": 64, "layers": 5, "epochs": 10, "gcn_epochs": 5, "compare": False,
         "clustering": "none"}


def attack_at(depth: int) -> dict[str, float]:
    result = run(RunConfig(protocol="fedgraph", partition="random:parties=3,features=0.1",
                           params={**SMALL, "depth": depth}, test_size=100))
    view = build_view(result.transcript, "server,party1", result.private)
    rec = EmbeddingInversion(steps=300, max_rows=60).run(view)
    assert len(rec.estimates) == 2  # the test rows and the raw training rows
    return PixelRecovery().score(rec, result.private)


def test_a_one_layer_extractor_gives_rows_back_and_five_layers_hide_most() -> None:
    shallow, deep = attack_at(1), attack_at(5)
    # 64 units under 78 inputs: even one layer is not injective, so not exact, yet every
    # row is found again.
    assert shallow["advantage"] > 0.7 and shallow["reidentified"] > 0.9
    assert shallow["psnr"] > shallow["baseline_psnr"] + 5
    assert deep["advantage"] < shallow["advantage"] - 0.3
    assert deep["reidentified"] < shallow["reidentified"] - 0.3


def test_the_server_alone_holds_no_extractor_so_the_attack_does_not_apply() -> None:
    result = run(RunConfig(protocol="fedgraph", partition="random:parties=2,features=0.1",
                           params={**SMALL, "depth": 1, "epochs": 1}, test_size=50))
    reason = EmbeddingInversion().not_applicable(build_view(result.transcript, "server",
                                                            result.private))
    assert reason is not None and "server,party1" in reason


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
