"""The shipped scenarios validate, and the quick-start audit writes its report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fedsec.audit import load_spec

AUDITS = sorted((Path(__file__).resolve().parents[2] / "audits").glob("*.toml"))


@pytest.mark.parametrize("path", AUDITS, ids=[p.stem for p in AUDITS])
def test_shipped_scenarios_validate(path: Path) -> None:
    spec = load_spec(path)
    assert spec.cells() and spec.attacks


def test_quickstart_writes_report_markdown_and_results(tmp_path: Path) -> None:
    quickstart = next(p for p in AUDITS if p.stem == "quickstart")
    result = subprocess.run([sys.executable, "-m", "fedsec.cli.main", "audit", str(quickstart),
                             "--out", str(tmp_path), "--jobs", "2"],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("report.html", "report.md", "results.json"):
        assert (tmp_path / name).is_file()
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["n_cells"] == 30 and not data["errors"]
    assert len(data["plots"]) == 3
