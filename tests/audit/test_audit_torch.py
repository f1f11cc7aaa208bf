"""Torch runs in the audit engine's worker processes: safe with --jobs 2 (forked from a process
without torch, spawned from one with it), and the same numbers as one process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from fedsec.audit import load_spec, run_audit

torch = pytest.importorskip("torch")

SCENARIO = textwrap.dedent("""
    [audit]
    name = "tiny_sfedmv"
    description = "S-FedMV on tiny keystrokes, attacked by the server"
    protocols = ["s-fedmv"]
    dataset = "keystrokes:participants=2,sessions=8,min_presses=3,max_presses=5"
    partition = "horizontal:by=site"
    seeds = [0, 1]
    secret_seed = 0

    [params]
    fedavg_rounds = 2
    local_epochs = 1
    hidden = 4
    rounds = 2
    local_rows = 2
    local_baselines = false

    [[attacks]]
    name = "fedavg-inversion"
    as = ["server"]
    params = { method = "dlg", steps = 5 }
""")


def numbers(out: Path) -> dict[str, Any]:
    cells = {}
    for path in sorted((out / "cells").glob("*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        assert result["status"] == "ok", result
        cells[result["cell"]] = (result["metrics"],
                                 [a["scores"] for a in result["attacks"]])
    return cells


def test_two_spawned_jobs_give_one_job_s_numbers(tmp_path: Path) -> None:
    spec_path = tmp_path / "tiny.toml"
    spec_path.write_text(SCENARIO, encoding="utf-8")
    serial = tmp_path / "serial"
    run_audit(load_spec(spec_path), serial, jobs=1)  # torch is loaded here: workers spawn
    spawned = tmp_path / "spawned"
    run_audit(load_spec(spec_path), spawned, jobs=2)
    expected = numbers(serial)
    assert len(expected) == 2
    assert numbers(spawned) == expected


@pytest.mark.slow
def test_two_forked_jobs_give_one_job_s_numbers(tmp_path: Path) -> None:
    spec_path = tmp_path / "tiny.toml"
    spec_path.write_text(SCENARIO, encoding="utf-8")
    serial = tmp_path / "serial"
    run_audit(load_spec(spec_path), serial, jobs=1)
    forked = tmp_path / "forked"  # a fresh CLI process has not loaded torch: workers fork
    done = subprocess.run([sys.executable, "-m", "fedsec.cli.main", "audit", str(spec_path),
                           "--out", str(forked), "--jobs", "2"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert numbers(forked) == numbers(serial)
