"""FedAvg update inversion on S-FedMV: exact on a tiny undefended case (the server's read and
two-client differencing), back to the prior under secure aggregation or update noise."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec import registry
from fedsec.data.dataset import Dataset
from fedsec.data.sequences import sequence_feature_names
from fedsec.plan import RunConfig
from fedsec.runner import RunResult, run
from fedsec.views import build_view

pytest.importorskip("torch")

T = 4
TINY = {"fedavg_rounds": 2, "local_epochs": 1, "hidden": 16, "batch_size": 8, "rounds": 1,
        "optimizer": "sgd", "lr": 0.1, "local_rows": 1, "local_baselines": False}


def short_sequences() -> Dataset:
    """Two fixed-length views of T steps (no padding), two classes."""
    rng = np.random.default_rng(0)
    n = 40
    y = rng.integers(0, 2, n)
    a = rng.normal(size=(n, T, 2)) + y[:, None, None]
    b = rng.normal(size=(n, T, 1)) - y[:, None, None]
    names = sequence_feature_names("a", ("u", "v"), T) + sequence_feature_names("b", ("w",), T)
    return Dataset(name="short-sequences",
                   X=np.concatenate([a.reshape(n, -1), b.reshape(n, -1)], axis=1), y=y,
                   task="binary", feature_names=names,
                   feature_groups={"a": tuple(range(2 * T)), "b": tuple(range(2 * T, 3 * T))})


@pytest.fixture
def dataset(monkeypatch: pytest.MonkeyPatch) -> str:
    import fedsec.data.registry as data_registry

    loaders = dict(data_registry.LOADERS)
    loaders["short-sequences"] = short_sequences
    monkeypatch.setattr(data_registry, "LOADERS", loaders)
    return "short-sequences"


def attack(result: RunResult, threat: str, **params: object) -> dict[str, float]:
    view = build_view(result.transcript, threat, result.private)
    inversion = registry.create("attack", "fedavg-inversion", {"method": "dlg", "steps": 60,
                                                                **params})
    reason = inversion.not_applicable(view)
    if reason is not None:
        return {"not_applicable": 1.0}
    scorer = registry.create("scorer", "sequence-match", {})
    return scorer.score(inversion.run(view), result.private)


def tiny(dataset: str, backend: str = "plain", **params: object) -> RunResult:
    return run(RunConfig(protocol="s-fedmv", dataset=dataset, backend=backend,
                         partition="horizontal:parties=2", params={**TINY, **params}))


def test_the_server_recovers_one_sequence_from_one_sgd_step(dataset: str) -> None:
    scores = attack(tiny(dataset), "server")
    assert scores["mse"] < 1e-3 * scores["baseline_mse"]
    assert scores["correlation"] > 0.99
    assert scores["label_accuracy"] == 1.0


def test_with_two_clients_each_reads_the_other_from_the_average(dataset: str) -> None:
    scores = attack(tiny(dataset), "party1", other_rows=1)
    assert scores["mse"] < 1e-2 * scores["baseline_mse"]
    assert scores["label_accuracy"] == 1.0


def test_secure_aggregation_stops_the_server_not_the_other_client(dataset: str) -> None:
    masked = tiny(dataset, backend="noise")
    assert attack(masked, "server") == {"not_applicable": 1.0}
    # with two clients the average is the other's update plus one's own: masking can't help
    assert attack(masked, "party1", other_rows=1)["correlation"] > 0.9


def test_update_noise_takes_the_attack_back_to_the_prior(dataset: str) -> None:
    scores = attack(tiny(dataset, clip=0.1, noise_multiplier=1.0), "server")
    assert scores["advantage"] < 0.2
