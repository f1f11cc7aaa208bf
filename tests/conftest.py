"""Fixtures shared across the suite: runs of NRI-DC (each configuration runs once per session),
a tiny S-FedMV run, a slow attack written beside a scenario; the --run-slow option; and
repeatable secret seeds.

A run's secret seed is random by default (:func:`fedsec.seeding.new_secret_seed`, from the
operating system). In this process the suite draws them instead from a stream keyed by the
test's name (:class:`_RepeatableSecrets`): every draw is still a 128-bit number no test knows
in advance, two draws within a test differ, and a test sees the same ones each time it runs,
so no threshold a test checks rests on a lucky draw. Runs started as subprocesses (the CLI
tests) draw from the operating system, as users' runs do."""

from __future__ import annotations

import hashlib
import importlib
import json
import textwrap
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from fedsec.data.dataset import Dataset
from fedsec.data.sequences import sequence_feature_names
from fedsec.federation import Federation
from fedsec.runner import RunConfig, RunResult, run
from fedsec.testing import small_federation

PIMA = "horizontal:parties=13,size=50"
#: 100 of Pima's 768 rows for testing, as in the paper (the rest feeds the 13 x 50 workers)
PIMA_TEST_SIZE = 0.1302


@cache
def _cached(key: str) -> RunResult:
    options = json.loads(key)
    params = options.pop("params")
    defenses = [(name, dict(p)) for name, p in options.pop("defenses")]
    config = RunConfig(protocol="nri-dc", dataset=options.pop("dataset", "pima"),
                       partition=options.pop("partition", PIMA),
                       test_size=options.pop("test_size", PIMA_TEST_SIZE),
                       scaling=options.pop("scaling", "standard"), params=params,
                       defenses=defenses, seed=(seed := options.pop("seed", 0)),
                       secret_seed=seed)  # the runs a test compares share their secrets
    return run(config)


def _nri_dc(*, defenses: tuple[tuple[str, dict[str, Any]], ...] = (), **options: Any) -> RunResult:
    """Run NRI-DC on Pima (13 workers x 50, 100 test rows, standardised); protocol params in
    ``params=``, anything else overrides the run configuration."""
    options.setdefault("params", {})
    key = json.dumps({**options, "defenses": [list(d) for d in defenses]}, sort_keys=True)
    return _cached(key)


#: The benchmark scripts' folder (plain scripts, no package; some import their siblings).
BENCHMARKS = Path(__file__).resolve().parent / "benchmarks"


@pytest.fixture
def benchmark_script(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], ModuleType]:
    """``benchmark_script(name)``: the script ``tests/benchmarks/<name>.py`` imported as a
    module from its folder, for tests of its pure parts."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module


@pytest.fixture
def federation_factory() -> Callable[..., Federation]:
    """``federation_factory(n_senders, seed=0, extra=())``: a small federation without data."""
    return small_federation


@pytest.fixture(name="nri_dc")
def nri_dc_fixture() -> Callable[..., RunResult]:
    """``nri_dc(params=..., defenses=..., **run options)``: a cached NRI-DC run on Pima."""
    return _nri_dc


#: S-FedMV's tiny run for the attacks on its FedAvg updates: two clients, short fixed-length
#: sequences of two views, one round of local training on a chosen number of rows.
T_SHORT = 4
TINY_SFEDMV = {"fedavg_rounds": 2, "local_epochs": 1, "hidden": 16, "batch_size": 8,
               "rounds": 1, "optimizer": "sgd", "lr": 0.1, "local_rows": 1,
               "local_baselines": False}


def short_sequences() -> Dataset:
    """Two fixed-length views of T_SHORT steps (no padding), two classes."""
    rng = np.random.default_rng(0)
    n, t = 40, T_SHORT
    y = rng.integers(0, 2, n)
    a = rng.normal(size=(n, t, 2)) + y[:, None, None]
    b = rng.normal(size=(n, t, 1)) - y[:, None, None]
    names = sequence_feature_names("a", ("u", "v"), t) + sequence_feature_names("b", ("w",), t)
    return Dataset(name="short-sequences",
                   X=np.concatenate([a.reshape(n, -1), b.reshape(n, -1)], axis=1), y=y,
                   task="binary", feature_names=names,
                   feature_groups={"a": tuple(range(2 * t)), "b": tuple(range(2 * t, 3 * t))})


@pytest.fixture
def add_dataset(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, Callable[[], Dataset]], str]:
    """``add_dataset(name, loader)``: registers a dataset loader under ``name`` for this test
    only; returns the name."""
    import fedsec.data.registry as data_registry

    def add(name: str, loader: Callable[[], Dataset]) -> str:
        monkeypatch.setattr(data_registry, "LOADERS", {**data_registry.LOADERS, name: loader})
        return name

    return add


@pytest.fixture
def short_sequences_dataset(add_dataset: Callable[[str, Callable[[], Dataset]], str]) -> str:
    return add_dataset("short-sequences", short_sequences)


@pytest.fixture
def tiny_sfedmv(short_sequences_dataset: str) -> Callable[..., RunResult]:
    """Runs S-FedMV on the short sequences (``TINY_SFEDMV``'s parameters, overridden by keyword)."""

    def run_tiny(backend: str = "plain", **params: object) -> RunResult:
        return run(RunConfig(protocol="s-fedmv", dataset=short_sequences_dataset, backend=backend,
                             partition="horizontal:parties=2", params={**TINY_SFEDMV, **params},
                             secret_seed=0))

    return run_tiny


class _RepeatableSecrets:
    """Stands in for the ``secrets`` module inside :mod:`fedsec.seeding` during the suite."""

    test = ""
    draws = 0

    @classmethod
    def randbits(cls, k: int) -> int:
        cls.draws += 1
        digest = hashlib.sha256(f"{cls.test}\x00{cls.draws}".encode()).digest()
        return int.from_bytes(digest, "little") % (1 << k)


def pytest_configure(config: pytest.Config) -> None:
    import fedsec.seeding

    fedsec.seeding.secrets = _RepeatableSecrets  # type: ignore[assignment]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _RepeatableSecrets.test, _RepeatableSecrets.draws = item.nodeid, 0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the paper-scale tests marked slow (minutes each)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="paper-scale: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)

SLOW_ATTACK = '''
import time
from dataclasses import dataclass

from fedsec.attacks.contribution_readout import ContributionReadout


class SlowReadout(ContributionReadout):
    """contribution-readout after a pause of ``seconds``."""

    @dataclass(frozen=True, kw_only=True)
    class Params:
        seconds: float = 1.0

    def run(self, view):
        time.sleep(self.params.seconds)
        return super().run(view)
'''


@pytest.fixture
def slow_attack() -> Callable[[Path], str]:
    """Writes ``slow_attack.py`` into a folder; returns the component's name there
    (``slow_attack:SlowReadout``: contribution-readout after ``seconds`` of sleep)."""

    def write(folder: Path) -> str:
        (folder / "slow_attack.py").write_text(textwrap.dedent(SLOW_ATTACK))
        return "slow_attack:SlowReadout"

    return write
