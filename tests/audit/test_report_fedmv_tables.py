"""The FedMV tables' report credits the noise backend for stopping subspace accumulation (the
attack cannot run there: the server sees only the sum), and never says a column-space attack
recovered records.

``audits/fedmv_tables.toml`` narrowed to V-FedMV and one repetition (two cells, about half a
minute): H-FedMV's cells take minutes and the attacks do not apply to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fedsec.audit import load_spec, run_audit
from fedsec.report import build_report

TABLES = Path(__file__).resolve().parents[2] / "audits" / "fedmv_tables.toml"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("fedmv")
    text = TABLES.read_text(encoding="utf-8")
    narrowed = text.replace('protocols = ["v-fedmv", "h-fedmv"]', 'protocols = ["v-fedmv"]')
    narrowed = narrowed.replace("repetitions = 3", "repetitions = 1")
    assert narrowed.count('"v-fedmv"') == 1 and "repetitions = 1" in narrowed
    spec = root / "fedmv_tables.toml"
    spec.write_text(narrowed, encoding="utf-8")
    run_audit(load_spec(spec), root / "out")
    build_report(root / "out")
    return dict(json.loads((root / "out" / "results.json").read_text(encoding="utf-8")))


def test_the_noise_backend_is_credited_for_stopping_subspace_accumulation(
        report: dict[str, Any]) -> None:
    (line,) = [s for s in report["what_stops"] if "subspace-accumulation as server" in s]
    assert line.startswith("What stops subspace-accumulation as server: the noise backend "
                           "(it cannot run:")
    assert "against the plain backend)" in line and "Nothing" not in line
    assert line.endswith("It still gains over its naive baseline under plain.")


def test_no_verdict_of_a_column_space_attack_says_records(report: dict[str, Any]) -> None:
    column_space = [f"{c['configuration']}: " for c in report["configurations"]
                    for a in c["attacks"] if a["scorer"] == "column-space"
                    and a["status"] == "ok"]
    assert len(column_space) == 3  # subspace accumulation under plain, curious-client twice
    verdicts = [v for v in report["verdicts"] if "subspace-accumulation" in v
                or "curious-client" in v]
    assert len(verdicts) == 3
    assert all("the column space of the data of party" in v and "records" not in v
               for v in verdicts)
    assert "records" not in report["worst_leak"]
    sentences = [s for h in report["headlines"] for s in h["sentences"]]
    assert sentences and not [s for s in sentences if "records" in s]
