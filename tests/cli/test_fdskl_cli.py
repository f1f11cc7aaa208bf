"""The command line: run FDSKL, then attack what party1 saw."""

from __future__ import annotations

import json
import subprocess
import sys


def fedsec(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "fedsec.cli.main", *args], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def test_run_and_attack_from_the_command_line(tmp_path) -> None:
    out = tmp_path / "fdskl"
    record = fedsec("run", "fdskl", "--dataset", "breast_cancer", "--partition",
                    "vertical:parties=4", "--backend", "plain", "--out", str(out), "--json",
                    "--set", "n_iterations=600", "--set", "offsets=fresh")
    assert record["comparison"]["agrees"]
    assert record["metrics"]["federated"]["accuracy"] > 0.85
    outcome = fedsec("attack", str(out / "transcript.arrow"), "--attack", "linear-inference",
                     "--as", "party1", "--truth", str(out), "--json", "--set", "anchor=minmax",
                     "--set", "curve_points=4")
    scores = outcome["scores"]
    assert scores["n_targets"] == 3
    assert scores["relative_error"] < scores["baseline_relative_error"]
    collusion = fedsec("attack", str(out / "transcript.arrow"), "--attack", "tree-collusion",
                       "--as", "party1,party2", "--truth", str(out), "--json")
    assert collusion["scores"]["n_targets"] == 2
