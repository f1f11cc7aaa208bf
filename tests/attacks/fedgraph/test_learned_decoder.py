"""Learned decoders on FedGraph: fitted on a colluder's own pairs, they read a one-layer
extractor's test embeddings back and stay at their baseline where embeddings carry nothing;
the ridge penalty and the MLP's epoch are chosen on the colluder's held-out pairs."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec import nn
from fedsec.attacks.fedgraph.decoders import decode, fit_mlp, fit_ridge
from fedsec.attacks.fedgraph.inverse_network import InverseNetwork
from fedsec.attacks.fedgraph.learned_decoder import LearnedDecoder
from fedsec.errors import ValidationError
from fedsec.plan import RunConfig
from fedsec.runner import run
from fedsec.scoring.pixels import PixelRecovery
from fedsec.views import build_view

pytest.importorskip("torch")

TINY = {"hidden": 64, "layers": 2, "epochs": 10, "gcn_epochs": 1, "compare": False,
        "depth": 1, "clustering": "none"}


@pytest.fixture(scope="module")
def depth_one() -> object:
    return run(RunConfig(protocol="fedgraph", partition="random:parties=3,features=0.1",
                         params=TINY, test_size=0.5))


@pytest.mark.parametrize("params", [{"decoder": "ridge"},
                                    {"decoder": "mlp", "epochs": 60}])
def test_a_decoder_fitted_on_the_colluders_pairs_reads_a_shallow_extractor(
        depth_one: object, params: dict) -> None:
    view = build_view(depth_one.transcript, "server,party1", depth_one.private)
    rec = LearnedDecoder(**params).run(view)
    score = PixelRecovery().score(rec, depth_one.private)
    assert score["reidentified"] > 0.8 and score["advantage"] > 0.7
    assert score["psnr"] > score["baseline_psnr"] + 6
    convergence = rec.info["convergence"]
    if params["decoder"] == "ridge":
        assert convergence["stopped"] == "closed-form" and rec.info["chosen"]["party1"] > 0
    else:
        assert convergence["stopped"] in ("converged", "budget")
        assert len(convergence["history"]) > 1 and 1 <= rec.info["chosen"]["party1"] <= 60


def test_without_the_colluders_training_inputs_there_is_nothing_to_fit(
        depth_one: object) -> None:
    view = build_view(depth_one.transcript, "server", depth_one.private)
    reason = LearnedDecoder().not_applicable(view)
    assert reason is not None and "server,party1" in reason
    with pytest.raises(ValidationError):
        LearnedDecoder(decoder="lasso")


def test_the_inverse_network_reports_its_training_loss(depth_one: object) -> None:
    view = build_view(depth_one.transcript, "server,party1", depth_one.private)
    convergence = InverseNetwork(epochs=5).run(view).info["convergence"]
    assert convergence["budget"] == 5 and convergence["steps"] == 5
    assert convergence["stopped"] == "budget"  # five epochs: the loss still falls
    assert convergence["history"][-1] < convergence["history"][0]


@pytest.mark.parametrize("decoder", ["ridge", "mlp"])
def test_embeddings_independent_of_the_inputs_leave_a_decoder_at_its_baseline(
        decoder: str) -> None:
    rng = np.random.default_rng(0)
    X, X_new = rng.uniform(-1, 1, size=(300, 20)), rng.uniform(-1, 1, size=(200, 20))
    E, E_new = rng.normal(size=(300, 8)), rng.normal(size=(200, 8))
    with nn.deterministic(0):
        model = (fit_ridge(E, X, folds=5, seed=0) if decoder == "ridge" else
                 fit_mlp(E, X, hidden=64, epochs=30, lr=0.001, batch_size=32,
                         validation=0.2, patience=10, seed=0))
        guess = decode(model, E_new)
    mse = float(np.mean((guess - X_new) ** 2))
    baseline = float(np.mean((X.mean(axis=0) - X_new) ** 2))
    assert baseline * 0.98 <= mse <= baseline * 1.05  # the mean, and not worse


def test_ridge_chooses_its_penalty_on_the_pairs_a_small_one_for_a_clean_linear_map() -> None:
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(200, 4))
    clean = fit_ridge(X @ rng.normal(size=(4, 10)), X, folds=5, seed=0)
    noise = fit_ridge(rng.normal(size=(200, 10)), X, folds=5, seed=0)
    assert clean.chosen < noise.chosen
    assert min(clean.validation) < 1e-3 < min(noise.validation)


def test_early_stopping_ends_training_once_the_held_out_error_stops_improving() -> None:
    from fedsec.attacks.fedgraph.inversion import early_stop_judged

    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(200, 4))
    E = np.tanh(X @ rng.normal(size=(4, 6)))
    with nn.deterministic(0):
        model = fit_mlp(E, X, hidden=32, epochs=5000, lr=0.01, batch_size=32,
                        validation=0.2, patience=15, seed=0)
    history = list(model.validation)
    best = int(np.argmin(history))
    assert len(history) < 5000  # stopped by patience, far before the cap
    assert len(history) - 1 - best == 15  # exactly patience epochs after the best
    assert model.chosen == best + 1  # the best held-out epoch is what is kept
    assert early_stop_judged(history, epochs=5000, patience=15).stopped == "converged"
    assert early_stop_judged(history[:best + 1], epochs=best + 1,
                             patience=15).stopped == "budget"
