"""FedAvg update inversion on S-FedMV: exact on a tiny undefended case (the server's read and
two-client differencing), back to the prior under secure aggregation or update noise."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fedsec import registry
from fedsec.runner import RunResult
from fedsec.views import build_view

pytest.importorskip("torch")

Tiny = Callable[..., RunResult]


def attack(result: RunResult, threat: str, **params: object) -> dict[str, float]:
    view = build_view(result.transcript, threat, result.private)
    inversion = registry.create("attack", "fedavg-inversion", {"method": "dlg", "steps": 60,
                                                                **params})
    reason = inversion.not_applicable(view)
    if reason is not None:
        return {"not_applicable": 1.0}
    scorer = registry.create("scorer", "sequence-match", {})
    return scorer.score(inversion.run(view), result.private)


def test_the_server_recovers_one_sequence_from_one_sgd_step(tiny_sfedmv: Tiny) -> None:
    scores = attack(tiny_sfedmv(), "server")
    assert scores["mse"] < 1e-3 * scores["baseline_mse"]
    assert scores["correlation"] > 0.99
    assert scores["label_accuracy"] == 1.0


def test_with_two_clients_each_reads_the_other_from_the_average(tiny_sfedmv: Tiny) -> None:
    scores = attack(tiny_sfedmv(), "party1", other_rows=1)
    assert scores["mse"] < 1e-2 * scores["baseline_mse"]
    assert scores["label_accuracy"] == 1.0


def test_secure_aggregation_stops_the_server_not_the_other_client(tiny_sfedmv: Tiny) -> None:
    masked = tiny_sfedmv(backend="noise")
    assert attack(masked, "server") == {"not_applicable": 1.0}
    # with two clients the average is the other's update plus one's own: masking can't help
    assert attack(masked, "party1", other_rows=1)["correlation"] > 0.9


def test_update_noise_takes_the_attack_back_to_the_prior(tiny_sfedmv: Tiny) -> None:
    scores = attack(tiny_sfedmv(clip=0.1, noise_multiplier=1.0), "server")
    assert scores["advantage"] < 0.2


def test_the_inversion_reports_how_each_view_converged(tiny_sfedmv: Tiny) -> None:
    result = tiny_sfedmv(local_rows=2, local_epochs=2, batch_size=1)
    view = build_view(result.transcript, "server", result.private)
    reconstruction = registry.create("attack", "fedavg-inversion", {
        "method": "ig", "steps": 16, "restarts": 2, "epoch_prior": 1.0}).run(view)
    record = reconstruction.info["convergence"]
    assert record["runs"] == 2 and record["budget"] == 16
    assert record["stopped"] in {"converged", "budget"} and len(record["history"]) == 16
    # the epoch prior's per-epoch sets are merged back to the client's two sequences
    rows = next(v for k, v in reconstruction.estimates.items() if k.endswith("X"))
    assert rows.shape[0] == 2
