"""The CI gate cannot pass by mistake: unknown metrics, failed runs and gates that measured
nothing (by subprocess, as CI runs it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from fedsec import registry
from fedsec.audit.gate import Gate, check_gates
from fedsec.errors import ValidationError

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]

SUM = """
[audit]
name = "gate-sum"
protocols = ["secure-sum"]
dataset = "iris"

[[attacks]]
name = "contribution-readout"
as = ["aggregator"]
"""

FAILING = """
[audit]
name = "gate-failing"
protocols = ["v-fedmv"]
dataset = "iris"          # one view only: every run fails when it starts
partition = "vertical:parties=2,by=even"

[[attacks]]
name = "subspace-accumulation"
as = ["server"]
"""

MASKED = """
[audit]
name = "gate-masked"
protocols = ["v-fedmv"]
dataset = "mfeat:views=zer+mor"
backends = ["noise"]     # the server reads no single view estimate: the attack never applies

[[attacks]]
name = "subspace-accumulation"
as = ["server"]
"""


def audit(tmp_path: Path, text: str, *gate: str,
          timeout: float = 600) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "scenario.toml"
    spec.write_text(textwrap.dedent(text))
    args = [arg for g in gate for arg in ("--fail-if", g)]
    return subprocess.run([*FEDSEC, "audit", str(spec), "--out", str(tmp_path / "out"), *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_a_misspelt_metric_is_a_usage_error_listing_the_real_ones(tmp_path: Path) -> None:
    result = audit(tmp_path, SUM, "leakage.advantge > 0.5")
    assert result.returncode == 2, result.stderr
    assert "no metric 'advantge'" in result.stderr and "advantage" in result.stderr


SLOW = """
[audit]
name = "gate-slow"
protocols = ["secure-sum"]
dataset = "iris"
seeds = [0, 1]

[[attacks]]
name = "slow_attack:SlowReadout"
as = ["aggregator"]
params = { seconds = 600 }   # every cell takes ten minutes
"""


def test_a_misspelt_metric_is_refused_before_any_cell_runs(
        tmp_path: Path, slow_attack: Callable[[Path], str]) -> None:
    slow_attack(tmp_path)
    started = time.monotonic()
    result = audit(tmp_path, SLOW, "leakage.advantge > 0.5", timeout=60)
    assert time.monotonic() - started < 5, result.stderr
    assert result.returncode == 2, result.stderr
    assert "Did you mean 'advantage'?" in result.stderr
    assert not (tmp_path / "out").exists()  # nothing ran, nothing was written


def test_gates_are_checked_against_the_scorers_glossaries() -> None:
    scorers = [registry.get("scorer", "point-recovery"),
               registry.get("scorer", "reconstruction-error")]
    check_gates([Gate.parse("leakage.point_error > 0.1"),
                 Gate.parse("leakage.baseline_relative_error < 1"),
                 Gate.parse("leakage.advantage > 0.5")], scorers)
    with pytest.raises(ValidationError, match="Did you mean 'point_error'"):
        check_gates([Gate.parse("leakage.pointerror > 0.1")], scorers)

    class Undeclared:  # a plug-in scorer without a glossary: checked after the audit instead
        name = "undeclared"

    check_gates([Gate.parse("leakage.anything > 0.1")], [*scorers, Undeclared])


def test_a_failed_run_fails_the_audit_with_or_without_a_gate(tmp_path: Path) -> None:
    plain = audit(tmp_path, FAILING)
    assert plain.returncode == 1 and "run failed: v-fedmv" in plain.stderr
    assert "two or more views" in plain.stderr
    gated = audit(tmp_path, FAILING, "leakage.advantage > 0.5")
    assert gated.returncode == 1 and "gate measured nothing" in gated.stderr


def test_a_gate_that_measured_nothing_fails(tmp_path: Path) -> None:
    result = audit(tmp_path, MASKED, "leakage.advantage > 0.5")
    assert result.returncode == 1, result.stderr
    assert "gate measured nothing" in result.stderr and "threshold crossed" not in result.stderr


def test_a_gate_that_measured_and_held_passes(tmp_path: Path) -> None:
    result = audit(tmp_path, SUM, "leakage.advantage > 1.5")
    assert result.returncode == 0, result.stderr
