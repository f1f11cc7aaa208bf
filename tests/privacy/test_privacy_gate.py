"""The audit gate reads the accountant's epsilon: ``--fail-if "privacy.epsilon > X"``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from fedsec.audit.gate import Gate, evaluate
from fedsec.errors import ValidationError


def _cell(name: str, privacy: dict[str, Any] | None) -> dict[str, Any]:
    cell: dict[str, Any] = {"configuration": name, "config": {"seed": 0}, "status": "ok",
                            "attacks": []}
    if privacy is not None:
        cell["privacy"] = privacy
    return cell


def test_privacy_gates_parse_and_refuse_unknown_figures() -> None:
    gate = Gate.parse("privacy.epsilon > 8")
    assert (gate.source, gate.metric, gate.op, gate.value) == ("privacy", "epsilon", ">", 8.0)
    assert str(gate) == "privacy.epsilon > 8"
    with pytest.raises(ValidationError, match="Did you mean 'epsilon'"):
        Gate.parse("privacy.epsilom > 8")


def test_a_privacy_gate_checks_noised_runs_and_counts_an_unstated_epsilon_as_infinite() -> None:
    cells = [
        _cell("accounted", {"noised": True, "epsilon": 3.0, "delta": 1e-5}),
        _cell("unbounded", {"noised": True, "epsilon": None, "delta": 1e-5,
                            "reason": "no sensitivity bound"}),
        _cell("undefended", {"noised": False, "epsilon": None, "delta": 1e-5}),
        _cell("older", None),
    ]
    failed, lines = evaluate([Gate.parse("privacy.epsilon > 8")], cells)
    assert failed and lines == ["threshold crossed: unbounded seed 0: privacy.epsilon = "
                                "infinite (no sensitivity bound) > 8"]
    failed, lines = evaluate([Gate.parse("privacy.epsilon > 2")], cells[:1])
    assert failed and lines == ["threshold crossed: accounted seed 0: privacy.epsilon = 3 > 2"]
    assert evaluate([Gate.parse("privacy.epsilon > 8")], cells[:1]) == (False, [])
    failed, lines = evaluate([Gate.parse("privacy.epsilon > 8")], cells[2:])
    assert failed and "no run's defences add noise" in lines[0]


SCENARIO = """
[audit]
name = "gate-epsilon"
protocols = ["secure-sum"]
dataset = "iris"

[[defenses]]
name = "gaussian-noise"
clip = 1.0
sigma = [0.5, 4.0]

[[attacks]]
name = "contribution-readout"
as = ["aggregator"]
"""


def test_an_audit_fails_its_gate_on_the_accountants_epsilon(tmp_path: Path) -> None:
    spec = tmp_path / "scenario.toml"
    spec.write_text(textwrap.dedent(SCENARIO), encoding="utf-8")
    command = [sys.executable, "-m", "fedsec.cli.main", "audit", str(spec), "--out",
               str(tmp_path / "out")]
    done = subprocess.run([*command, "--fail-if", "privacy.epsilon > 2"], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stderr
    crossed = [line for line in done.stderr.splitlines() if "threshold crossed" in line]
    assert len(crossed) == 1 and "sigma=0.5" in crossed[0], done.stderr
    cells = [json.loads(p.read_text()) for p in (tmp_path / "out" / "cells").glob("*.json")]
    epsilons = sorted(c["privacy"]["epsilon"] for c in cells if c["privacy"]["noised"])
    assert len(epsilons) == 2 and epsilons[0] < 2 < epsilons[1]
    table = pd.read_csv(tmp_path / "out" / "results.csv")  # epsilon beside the leakage
    rows = table.dropna(subset=["privacy.epsilon"])
    assert sorted(set(rows["privacy.epsilon"])) == pytest.approx(epsilons)
    assert rows["leakage.advantage"].notna().all()
    passed = subprocess.run([*command, "--fail-if", "privacy.epsilon > 20"],
                            capture_output=True, text=True, timeout=600, check=False)
    assert passed.returncode == 0, passed.stderr
