"""The attacks on what FedGraph's clients send besides raw embeddings: cluster means solved
for per-row embeddings once clusters are re-drawn, prototypes from cluster means, and the
inverse network trained on a colluder's pairs."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.attacks.fedgraph.disaggregation import ClusterDisaggregation
from fedsec.attacks.fedgraph.embedding_inversion import EmbeddingInversion
from fedsec.attacks.fedgraph.inverse_network import InverseNetwork
from fedsec.plan import RunConfig
from fedsec.runner import run
from fedsec.scoring.pixels import PixelRecovery
from fedsec.scoring.reconstruction import ReconstructionError
from fedsec.views import build_view

pytest.importorskip("torch")

TINY = {"hidden": 32, "layers": 1, "epochs": 3, "gcn_epochs": 1, "compare": False,
        "depth": 1}


def tiny_run(**params: object) -> object:
    return run(RunConfig(protocol="fedgraph", partition="random:parties=3,features=0.1",
                         params={**TINY, **params}, test_size=0.5))


def test_one_draw_hides_the_rows_and_about_s_draws_give_every_client_s_embeddings_back() -> None:
    once = tiny_run(redraws=1)
    view = build_view(once.transcript, "server,party2", once.private)
    score = ReconstructionError().score(ClusterDisaggregation().run(view), once.private)
    # One clustering: the least-squares answer is each row's cluster mean, the baseline.
    assert score["n_targets"] == 3 and score["advantage"] == pytest.approx(0.0, abs=1e-9)
    assert score["relative_error"] > 0.1
    again = tiny_run(redraws=12)  # s = 10: 12 draws give the stacked system full rank
    view = build_view(again.transcript, "server,party2", again.private)
    rec = ClusterDisaggregation().run(view)
    score = ReconstructionError().score(rec, again.private)
    assert rec.info["rank_share_min"] == 1.0 and score["relative_error"] < 1e-6
    # party3 never colluded: its embeddings come back all the same.
    assert score["per_target"]["party/party3/value/embeddings/train"]["relative_error"] < 1e-6


def test_without_a_client_of_the_group_nobody_knows_the_clusters() -> None:
    result = tiny_run(redraws=2)
    reason = ClusterDisaggregation().not_applicable(build_view(result.transcript, "server",
                                                               result.private))
    assert reason is not None and "cluster_seed" in reason


def test_a_cluster_mean_inverts_to_a_prototype_of_its_cluster() -> None:
    result = tiny_run(hidden=64, epochs=10)  # wide enough to be nearly injective
    view = build_view(result.transcript, "server,party1", result.private)
    rec = EmbeddingInversion(steps=200, max_rows=40).run(view)
    key = "party/party1/value/inputs/cluster_means"
    assert key in rec.estimates
    score = PixelRecovery().score(rec, result.private)["per_target"][key]
    # The prototype is nearest its own cluster's mean input; a mean embedding is no image's
    # embedding, so the prototype is sharper than the blurred mean it is scored against and its
    # pixel error need not beat the baseline's.
    assert score["reidentified"] > 0.5 > 10 * score["chance_reidentified"]
    assert rec.info["convergence"]["stopped"] in ("converged", "stalled", "budget")


def test_the_inverse_network_learns_from_a_colluders_pairs_and_not_from_noise() -> None:
    result = tiny_run(clustering="none", hidden=64, epochs=10)
    view = build_view(result.transcript, "server,party1", result.private)
    score = PixelRecovery().score(InverseNetwork().run(view),
                                  result.private)
    assert score["reidentified"] > 0.5 and score["advantage"] > 0.5
    assert InverseNetwork().not_applicable(build_view(result.transcript, "server",
                                                      result.private)) is not None


def test_an_inverse_network_on_embeddings_unrelated_to_the_inputs_stays_at_the_baseline(
) -> None:
    from fedsec import nn
    from fedsec.attacks.fedgraph.inversion import apply_inverse, fit_inverse

    rng = np.random.default_rng(0)
    X, X_new = rng.uniform(-1, 1, size=(300, 20)), rng.uniform(-1, 1, size=(100, 20))
    with nn.deterministic(0):
        f, _ = fit_inverse(rng.normal(size=(300, 8)), X, hidden=64, epochs=30, lr=0.001,
                           batch_size=32, validation=0.2, patience=10, seed=0)
        guess = apply_inverse(f, rng.normal(size=(100, 8)))
    mse = float(np.mean((guess - X_new) ** 2))
    baseline = float(np.mean((X.mean(axis=0) - X_new) ** 2))
    assert mse >= baseline * 0.98  # nothing learned beyond the mean



def test_with_withheld_groups_the_truth_holds_the_rows_that_went_into_means() -> None:
    result = run(RunConfig(protocol="fedgraph",
                           partition="random:parties=4,features=0.1,samples=0.5",
                           params={**TINY, "cluster_size": 30}, test_size=0.5))
    assert result.outcome.metrics["rows_withheld"] > 0  # some sample groups under s rows
    for party in ("party1", "party2", "party3", "party4"):
        clustered = result.private[f"party/{party}/value/clusters"][0] >= 0
        truth = result.private[f"party/{party}/value/embeddings/train"]
        assert len(truth) == clustered.sum() < len(clustered)  # the rows an attack can face
