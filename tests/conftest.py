"""Fixtures shared across the suite: runs of NRI-DC (each configuration runs once per session)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

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
                       defenses=defenses, seed=options.pop("seed", 0))
    return run(config)


def _nri_dc(*, defenses: tuple[tuple[str, dict[str, Any]], ...] = (), **options: Any) -> RunResult:
    """Run NRI-DC on Pima (13 workers x 50, 100 test rows, standardised); protocol params in
    ``params=``, anything else overrides the run configuration."""
    options.setdefault("params", {})
    key = json.dumps({**options, "defenses": [list(d) for d in defenses]}, sort_keys=True)
    return _cached(key)


@pytest.fixture
def federation_factory() -> Callable[..., Federation]:
    """``federation_factory(n_senders, seed=0, extra=())``: a small federation without data."""
    return small_federation


@pytest.fixture(name="nri_dc")
def nri_dc_fixture() -> Callable[..., RunResult]:
    """``nri_dc(params=..., defenses=..., **run options)``: a cached NRI-DC run on Pima."""
    return _nri_dc


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
