"""``--split-file`` and ``--split-seed`` from the command line, and ``split_seed`` in an audit."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from fedsec.audit import load_spec, run_audit

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]


def fedsec(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FEDSEC, *args], capture_output=True, text=True, timeout=300,
                          check=False)


def test_a_paper_s_split_from_a_file(tmp_path: Path) -> None:
    split = tmp_path / "paper.txt"
    split.write_text("# the first ten rows are the test rows\n" + " ".join(map(str, range(10))))
    proc = fedsec("run", "secure-sum", "--dataset", "iris", "--split-file", str(split),
                  "--out", str(tmp_path / "run"), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)["dataset"]
    assert (data["test_samples"], data["train_samples"]) == (10, 140)
    assert data["split"].startswith(f"file {split}")


def test_a_split_file_naming_rows_the_dataset_lacks_is_a_usage_error(tmp_path: Path) -> None:
    split = tmp_path / "paper.json"
    split.write_text(json.dumps({"test": [1, 500]}))
    proc = fedsec("run", "secure-sum", "--dataset", "iris", "--split-file", str(split),
                  "--out", str(tmp_path / "run"))
    assert proc.returncode == 2
    assert "names test row 500" in proc.stderr and "150 rows" in proc.stderr
    assert "internal error" not in proc.stderr


def test_an_audit_with_split_seed_runs_every_seed_on_one_split(tmp_path: Path) -> None:
    spec = tmp_path / "one_split.toml"
    spec.write_text(textwrap.dedent("""
        [audit]
        name = "one_split"
        protocols = ["secure-sum"]
        dataset = "iris"
        seeds = [0, 1, 2]
        split_seed = 4

        [[attacks]]
        name = "contribution-readout"
        as = ["aggregator"]
    """))
    loaded = load_spec(spec)
    assert loaded.split_seed == 4
    run_audit(loaded, tmp_path / "out")
    cells = [json.loads(p.read_text()) for p in (tmp_path / "out" / "cells").glob("*.json")]
    assert len(cells) == 3 and all(c["status"] == "ok" for c in cells)
    spec.write_text(spec.read_text().replace("split_seed = 4", "split_seed = 5"))
    assert {c.id for c in load_spec(spec).cells()}.isdisjoint(c["cell"] for c in cells)
