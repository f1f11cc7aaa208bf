"""``fedsec attack`` gives the attack the run's public seed that ``result.json`` records beside
the transcript, and none when the transcript stands alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]


def fedsec(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FEDSEC, *args], capture_output=True, text=True, timeout=300,
                          check=False)


def _attacked_seed(transcript: Path) -> object:
    proc = fedsec("attack", str(transcript), "--attack", "contribution-readout",
                  "--as", "aggregator", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["run_seed"]


def test_the_attack_reads_the_seed_of_result_json(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = fedsec("run", "secure-sum", "--dataset", "iris", "--partition",
                  "horizontal:parties=3", "--seed", "6", "--out", str(run))
    assert proc.returncode == 0, proc.stderr
    assert _attacked_seed(run / "transcript.arrow") == 6
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(run / "transcript.arrow", alone / "transcript.arrow")
    assert _attacked_seed(alone / "transcript.arrow") is None
