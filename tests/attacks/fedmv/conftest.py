"""A tiny S-FedMV run for the attacks on its FedAvg updates: two clients, short fixed-length
sequences of two views, one round of local training on a chosen number of rows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from fedsec.data.dataset import Dataset
from fedsec.data.sequences import sequence_feature_names
from fedsec.plan import RunConfig
from fedsec.runner import RunResult, run

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


@pytest.fixture
def tiny(dataset: str) -> Callable[..., RunResult]:
    """Runs S-FedMV on the short sequences (``TINY``'s parameters, overridden by keyword)."""

    def run_tiny(backend: str = "plain", **params: object) -> RunResult:
        return run(RunConfig(protocol="s-fedmv", dataset=dataset, backend=backend,
                             partition="horizontal:parties=2", params={**TINY, **params}))

    return run_tiny
