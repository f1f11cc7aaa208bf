"""A third-party plug-in package, installed as a user installs one, passes fedsec's conformance
gate through its entry points, a coalition attack among its components; attacks that break the
attack contract (one reads the truth, one ignores its View) fail it, saying so.

The package (``plugin_pkg/``, its own ``pyproject.toml``) is installed with pip, offline, into
a folder put on a subprocess's path: fedsec finds its components by their entry points alone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

FIXTURE = Path(__file__).parent / "plugin_pkg"
DISTRIBUTION = "fedsec-example-plugin"
ENTRY_POINTS = {"attack:key-partner-unmask", "defense:round-contributions", "scorer:worst-entry"}
BROKEN = {"truth": "fedsec_example_plugin.broken:TruthPeek",
          "constant": "fedsec_example_plugin.broken:ConstantGuess"}

#: A plug-in's own conformance run: every entry point of the distribution, found by name as
#: ``fedsec describe`` finds it, through the check of its kind; then attacks named by
#: module:Class. Prints one JSON object: each component's class and the gate's verdict.
GATE = r"""
import contextlib, io, json, sys
from importlib.metadata import distribution

from fedsec import registry, testing
from fedsec.cli.main import main

RUNS = {"secure-sum": {"dataset": "iris", "backend": "noise",
                       "partition": "horizontal:parties=3"}}
CHECKS = {"attack": lambda cls: testing.check_attack(cls, runs=RUNS),
          "defense": lambda cls: testing.check_defense(cls, runs=RUNS),
          "scorer": testing.check_scorer}
KINDS = {"fedsec.attacks": "attack", "fedsec.defenses": "defense", "fedsec.scorers": "scorer"}


def gate(kind, name):
    try:
        CHECKS[kind](registry.get(kind, name))
    except AssertionError as error:
        return str(error)
    return "ok"


def described(kind, name):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["describe", name, "--kind", kind, "--json"])
    return json.loads(out.getvalue())["class"]


found = {}
for ep in distribution(sys.argv[1]).entry_points:
    kind = KINDS[ep.group]
    found[f"{kind}:{ep.name}"] = {"class": described(kind, ep.name), "gate": gate(kind, ep.name)}
for path in sys.argv[2:]:
    found[path] = {"gate": gate("attack", path)}
print(json.dumps(found))
"""


def _install(target: Path, scratch: Path) -> None:
    """``pip install`` the fixture into ``target``, offline (from a copy: building writes
    beside the sources)."""
    source = scratch / "source"
    shutil.copytree(FIXTURE, source, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--no-build-isolation", "--disable-pip-version-check", "--target",
                    str(target), str(source)], check=True, capture_output=True, text=True,
                   timeout=120)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The gate's verdicts, from a subprocess that sees the installed plug-in."""
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("installing the plug-in offline needs setuptools in this environment")
    scratch = tmp_path_factory.mktemp("plugin")
    target = scratch / "site"
    _install(target, scratch)
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(p for p in (str(target),
                                                     os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", GATE, DISTRIBUTION, *BROKEN.values()],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


def test_the_installed_package_passes_the_gate_through_its_entry_points(
        gate: dict[str, Any]) -> None:
    plugins = {key: value for key, value in gate.items() if ":" in key and "." not in key}
    assert set(plugins) == ENTRY_POINTS
    for key, verdict in plugins.items():
        assert verdict["class"].startswith("fedsec_example_plugin."), key
        assert verdict["gate"] == "ok", f"{key}: {verdict['gate']}"


def test_an_attack_that_reads_the_truth_fails_the_gate(gate: dict[str, Any]) -> None:
    verdict = gate[BROKEN["truth"]]["gate"]
    assert "with the run's ground truth out of reach" in verdict
    assert "reads something beyond its View" in verdict


def test_an_attack_that_ignores_its_view_fails_the_gate(gate: dict[str, Any]) -> None:
    verdict = gate[BROKEN["constant"]]["gate"]
    assert "whose truth differs between the runs: its output ignores its View" in verdict


def test_the_coalition_attack_needs_a_coalition() -> None:
    """No party alone, nor a pair, opens a masked contribution of secure-sum over three
    senders; the aggregator with the two other senders does, and reads it (to the backend's
fixed-point precision)."""
    sys.path.insert(0, str(FIXTURE))
    try:
        from fedsec_example_plugin.coalition import KeyPartnerUnmask
    finally:
        sys.path.remove(str(FIXTURE))
    from fedsec.private_store import truth_key
    from fedsec.runner import RunConfig, run
    from fedsec.testing import coalitions
    from fedsec.views import build_view

    result = run(RunConfig(protocol="secure-sum", dataset="iris", backend="noise",
                           partition="horizontal:parties=3", reference=False))
    attack = KeyPartnerUnmask()
    able = [threat for threat in coalitions(list(result.transcript.parties))
            if attack.not_applicable(build_view(result.transcript, threat,
                                                result.private)) is None]
    assert able == ["party1,party2,aggregator", "party1,party3,aggregator",
                    "party2,party3,aggregator"]
    view = build_view(result.transcript, able[0], result.private)
    key = truth_key("party3", "value", "vector")
    assert np.allclose(attack.run(view).estimates[key], result.private[key], rtol=0,
                       atol=1e-9)
