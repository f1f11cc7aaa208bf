"""Running audits: grid, files, resume after a kill, user defences, gates, parallel jobs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fedsec.audit import load_spec, run_audit
from fedsec.audit.cell import CELL_SCHEMA_VERSION
from fedsec.report import build_report

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]

SCENARIO = """
[audit]
name = "tiny"
description = "secure sum under plain and noise, with and without noise on the contributions"
protocols = ["secure-sum"]
dataset = "iris"
backends = ["plain", "noise"]
seeds = [0, 1]

[[defenses]]
name = "gaussian-noise"
sigma = [0.5]

[[attacks]]
name = "contribution-readout"
as = ["aggregator", "eavesdropper:party1->aggregator"]
"""


def write(tmp_path: Path, text: str = SCENARIO, name: str = "tiny.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def fedsec(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FEDSEC, *args], capture_output=True, text=True, timeout=600,
                          check=False, cwd=cwd)


def test_audit_writes_cells_and_a_report(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path))
    cells = run_audit(spec, tmp_path / "out")
    assert len(cells) == 8 and all(c["status"] == "ok" for c in cells)
    report = build_report(tmp_path / "out")
    for name in ("report.html", "report.md", "results.json"):
        assert (tmp_path / "out" / name).is_file()
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["schema_version"] == "1" and len(data["configurations"]) == 4
    plain = next(c for c in report["configurations"]
                 if c["configuration"] == "secure-sum | plain | no defence")
    readout = next(a for a in plain["attacks"] if a["threat"] == "aggregator")
    assert readout["metrics"]["advantage"]["mean"] == 1.0
    masked = next(c for c in report["configurations"]
                  if c["configuration"] == "secure-sum | noise | no defence")
    readout = next(a for a in masked["attacks"] if a["threat"] == "aggregator")
    assert readout["metrics"]["advantage"]["mean"] == pytest.approx(0.0)
    assert any("recovers (nearly) exactly" in v for v in report["verdicts"])
    assert all(c["command"].startswith("fedsec audit") and "--cell" in c["command"]
               for c in cells)
    assert "estimates" not in json.dumps(data)  # reconstructions are never stored
    # every file of the audit is its owner's only, the report's and its plots' too
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"report.html", "report.md", "results.csv"}
    assert {p.relative_to(tmp_path) for p in written if p.stat().st_mode & 0o077} == set()


def test_rerunning_skips_finished_cells(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path))
    first = run_audit(spec, tmp_path / "out", only=spec.cells()[0].id)
    assert len(first) == 1
    messages: list[str] = []
    run_audit(spec, tmp_path / "out", progress=messages.append)
    assert messages[0].startswith("8 cells, 1 already done, 7 to run")


def test_killing_an_audit_midway_then_rerunning_completes_only_the_rest(tmp_path: Path) -> None:
    spec_path = write(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen([*FEDSEC, "audit", str(spec_path), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / "cells").glob("*.json"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    done_before = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    assert 2 <= len(done_before) < 8
    result = fedsec("audit", str(spec_path), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert f"{len(done_before)} already done, {8 - len(done_before)} to run" in result.stderr
    after = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    assert len(after) == 8
    assert all(after[name] == mtime for name, mtime in done_before.items())


def test_a_user_defence_outside_the_package_runs_by_module_path(tmp_path: Path) -> None:
    (tmp_path / "my_defences.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass

        from fedsec.interfaces import Defense


        class RoundContributions(Defense):
            """Round every contribution to a multiple of step before it is sent."""

            points = frozenset({"secure_sum.contribution"})

            @dataclass(frozen=True, kw_only=True)
            class Params:
                step: float = 10.0

            def transform(self, party, tag, values):
                return (values / self.params.step).round() * self.params.step
    '''))
    spec_path = write(tmp_path, SCENARIO.replace('name = "gaussian-noise"\nsigma = [0.5]',
                                                 'name = "my_defences:RoundContributions"\n'
                                                 'step = [50.0]'))
    result = fedsec("audit", str(spec_path), "--out", str(tmp_path / "out"), "--json",
                    cwd=tmp_path.parent)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    labels = {c["configuration"] for c in report["configurations"]}
    assert "secure-sum | plain | my_defences:RoundContributions:step=50.0" in labels
    rounded = next(c for c in report["configurations"]
                   if c["configuration"].startswith("secure-sum | plain | my_defences"))
    readout = next(a for a in rounded["attacks"] if a["threat"] == "aggregator")
    assert readout["metrics"]["advantage"]["mean"] < 1.0  # rounding hides the exact values


def test_fail_if_gate_and_parallel_jobs(tmp_path: Path) -> None:
    spec_path = write(tmp_path)
    crossed = fedsec("audit", str(spec_path), "--out", str(tmp_path / "a"), "--jobs", "2",
                     "--fail-if", "leakage.advantage > 0.9")
    assert crossed.returncode == 1
    assert "threshold crossed: secure-sum | plain | no defence" in crossed.stderr
    assert len(list((tmp_path / "a" / "cells").glob("*.json"))) == 8
    clean = fedsec("audit", str(spec_path), "--out", str(tmp_path / "a"),
                   "--fail-if", "leakage.advantage > 1.5")
    assert clean.returncode == 0 and "8 cells, 8 already done" in clean.stderr
    bad = fedsec("audit", str(spec_path), "--fail-if", "advantage big")
    assert bad.returncode == 2 and "leakage.METRIC OP NUMBER" in bad.stderr


def test_report_command_rebuilds_and_refuses_empty_dirs(tmp_path: Path) -> None:
    run_audit(load_spec(write(tmp_path)), tmp_path / "out")
    assert not (tmp_path / "out" / "report.html").exists()  # the engine writes results only
    rebuilt = fedsec("report", str(tmp_path / "out"))
    assert rebuilt.returncode == 0 and (tmp_path / "out" / "report.html").is_file()
    empty = fedsec("report", str(tmp_path / "nothing"))
    assert empty.returncode == 2 and "holds no audit results" in empty.stderr


def test_invalid_scenario_lists_problems_and_runs_nothing(tmp_path: Path) -> None:
    spec_path = write(tmp_path, SCENARIO.replace('"secure-sum"', '"secure-summ"'))
    result = fedsec("audit", str(spec_path), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "Unknown protocol 'secure-summ'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_an_attack_with_a_per_round_curve_gets_a_rounds_plot(tmp_path: Path) -> None:
    spec_path = write(tmp_path, textwrap.dedent('''
        [audit]
        name = "rounds"
        protocols = ["v-fedmv"]
        dataset = "mfeat:views=zer+mor"
        backends = ["plain", "noise"]

        [[attacks]]
        name = "subspace-accumulation"
        as = ["server"]
    '''), name="rounds.toml")
    run_audit(load_spec(spec_path), tmp_path / "out")
    report = build_report(tmp_path / "out")
    assert "rounds_subspace-accumulation_server.png" in report["plots"]
    cell = next(c for c in report["cells"] if c["config"]["backend"] == "plain")
    curve = cell["attacks"][0]["info"]["curve"]
    assert curve["series"]["party1"][:5] == [10, 20, 30, 40, 47]
    masked = next(c for c in report["cells"] if c["config"]["backend"] == "noise")
    assert masked["attacks"][0]["status"] == "not applicable"


def test_results_come_as_one_tidy_table(tmp_path: Path) -> None:
    import pandas as pd

    run_audit(load_spec(write(tmp_path)), tmp_path / "out")
    build_report(tmp_path / "out")
    table = pd.read_csv(tmp_path / "out" / "results.csv")
    # 2 backends x (none + 1 defence) x 2 seeds = 8 runs, each attacked as 2 adversaries
    assert len(table) == 16
    assert set(table["threat"]) == {"aggregator", "eavesdropper:party1->aggregator"}
    assert {"protocol", "backend", "defense", "seed", "accuracy", "attack_status",
            "leakage.advantage", "leakage.baseline_relative_error"} <= set(table.columns)
    readable = table[(table["backend"] == "plain") & table["defense"].isna()]
    assert (readable["leakage.advantage"] > 0.99).all()
    parquet = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert parquet.shape == table.shape


def test_a_narrowed_scenario_reports_only_its_own_cells(tmp_path: Path) -> None:
    run_audit(load_spec(write(tmp_path)), tmp_path / "out")
    narrowed = write(tmp_path, SCENARIO.replace('backends = ["plain", "noise"]',
                                                'backends = ["plain"]'), name="narrow.toml")
    cells = run_audit(load_spec(narrowed), tmp_path / "out")
    assert len(cells) == 4 and all(c["dataset"] == "iris" for c in cells)
    report = build_report(tmp_path / "out")
    assert report["n_cells"] == 4 and len(report["stale_cells"]) == 4
    assert {c["config"]["backend"] for c in report["cells"]} == {"plain"}
    assert "earlier version of the scenario" in (tmp_path / "out" / "report.md").read_text()


def test_the_report_defines_every_metric_it_shows(tmp_path: Path) -> None:
    run_audit(load_spec(write(tmp_path)), tmp_path / "out")
    report = build_report(tmp_path / "out")
    glossary = report["glossary"]
    assert {"baseline", "advantage", "relative_error", "fraction_recovered"} <= set(glossary)
    assert not any("no definition" in text for text in glossary.values())
    assert "<h2>Glossary</h2>" in (tmp_path / "out" / "report.html").read_text()


def test_a_changed_scenario_never_reuses_a_finished_cell(tmp_path: Path) -> None:
    from fedsec.audit.engine import is_done

    out = tmp_path / "out"
    run_audit(load_spec(write(tmp_path)), out)
    changes = [('dataset = "iris"', 'dataset = "wine"'),
               ('as = ["aggregator", "eavesdropper:party1->aggregator"]', 'as = ["aggregator"]'),
               ('seeds = [0, 1]', 'seeds = [0, 1]\ntest_size = 0.3'),
               ('seeds = [0, 1]', 'seeds = [0, 1]\nscaling = "none"'),
               ('seeds = [0, 1]', 'seeds = [0, 1]\npartition = "horizontal:parties=4"')]
    for old, new in changes:
        spec = load_spec(write(tmp_path, SCENARIO.replace(old, new), name="changed.toml"))
        assert not any(is_done(out, cell) for cell in spec.cells()), new
    run_audit(spec, out, only=spec.cells()[0].id)
    report = build_report(out)  # the last scenario's one cell; every other is stale
    assert report["n_cells"] == 1
    assert "horizontal:parties=4" in report["scenario_text"]


def test_a_damaged_cell_file_is_rerun_and_left_out_of_the_report(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path))
    out = tmp_path / "out"
    run_audit(spec, out)
    damaged = out / "cells" / f"{spec.cells()[0].id}.json"
    damaged.write_bytes(b"\xff\xfe not json")
    report = build_report(out)
    assert report["n_cells"] == 7 and any("unreadable" in s for s in report["stale_cells"])
    messages: list[str] = []
    run_audit(spec, out, progress=messages.append)
    assert messages[0].startswith("8 cells, 7 already done, 1 to run")
    assert build_report(out)["n_cells"] == 8


@pytest.mark.parametrize(("cores", "busy", "starts_after"), [
    (2, 1, 0),  # a serial audit on two cores: a core is idle from the start
    (2, 0, 0),  # the cells run on a remote cluster
    (2, 2, 3),  # two jobs on two cores: only once the last cell runs alone
    (1, 1, 4),  # one core: only when every cell is done
])
def test_plotting_is_prepared_only_on_a_core_the_cells_leave_idle(
        monkeypatch: pytest.MonkeyPatch, cores: int, busy: int, starts_after: int) -> None:
    from fedsec.audit import engine

    started: list[int] = []
    monkeypatch.setattr(engine.os, "sched_getaffinity", lambda _pid: set(range(cores)))
    monkeypatch.setattr(engine, "_prepare_plotting", lambda: None)
    warm_up = engine._WarmUp(4, busy)
    for n in range(5):
        if n:
            warm_up.finished(n)
        if warm_up._thread.ident and not started:
            started.append(n)
    warm_up.join()
    assert started == [starts_after]


CSV_SCENARIO = """
[audit]
name = "csv"
protocols = ["secure-sum"]
dataset = "data.csv"
seeds = [0]

[[attacks]]
name = "contribution-readout"
as = ["aggregator"]
"""


def test_a_changed_csv_dataset_or_fedsec_version_reruns_the_cell(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fedsec import results
    from fedsec.audit.engine import is_done

    monkeypatch.chdir(tmp_path)  # the CSV path is read from the working folder
    rng = np.random.default_rng(0)
    rows = ["a,b,c,label"] + [f"{x:.3f},{y:.3f},{z:.3f},{i % 2}"
                              for i, (x, y, z) in enumerate(rng.normal(size=(40, 3)))]
    (tmp_path / "data.csv").write_text("\n".join(rows) + "\n")
    spec = load_spec(write(tmp_path, CSV_SCENARIO, name="csv.toml"))
    out = tmp_path / "out"
    run_audit(spec, out)
    messages: list[str] = []
    run_audit(spec, out, progress=messages.append)
    assert messages[0].startswith("1 cells, 1 already done, 0 to run")
    # the same path, other rows: the stored cell is stale
    (tmp_path / "data.csv").write_text("\n".join([rows[0], *rows[1:][::-1]]) + "\n")
    messages.clear()
    run_audit(spec, out, progress=messages.append)
    assert messages[0].startswith("1 cells, 0 already done, 1 to run")
    assert is_done(out, spec.cells()[0])  # rerun and stored again
    # another fedsec version
    versions = dict(results.versions())
    monkeypatch.setattr("fedsec.audit.cell.versions", lambda: {**versions, "fedsec": "9.9"})
    messages.clear()
    run_audit(spec, out, progress=messages.append)
    assert messages[0].startswith("1 cells, 0 already done, 1 to run")


@pytest.mark.parametrize("planted", [
    {"status": "ok", "cell": "bogus"},
    {"status": "ok", "cell": "ID"},
    {"schema_version": CELL_SCHEMA_VERSION, "status": "ok", "cell": "ID", "configuration": "x",
     "config": {},
     "dataset": "iris", "command": "", "seconds": 1.0, "metrics": {}, "reference_metrics": {},
     "cost": {}, "versions": {}, "backend": {}, "attacks": [{"attack": "x"}]},
    ["not", "an", "object"],
])
def test_a_planted_cell_file_is_not_counted_and_does_not_crash_the_report(
        tmp_path: Path, planted: object) -> None:
    from fedsec.audit.engine import is_done

    spec = load_spec(write(tmp_path))
    out = tmp_path / "out"
    first = spec.cells()[0]
    (out / "cells").mkdir(parents=True)
    text = json.dumps(planted).replace('"ID"', json.dumps(first.id))
    (out / "cells" / f"{first.id}.json").write_text(text)
    (out / "cells" / "bogus.json").write_text(text)
    assert not is_done(out, first)
    messages: list[str] = []
    cells = run_audit(spec, out, progress=messages.append, only=None)
    assert messages[0].startswith("8 cells, 0 already done, 8 to run")
    assert len(cells) == 8 and all(c["status"] == "ok" for c in cells)
    assert build_report(out)["n_cells"] == 8


COMPONENT_SCENARIO = """
[audit]
name = "own-component"
protocols = ["secure-sum"]
dataset = "iris"
seeds = [0]

[[attacks]]
name = "slow_attack:SlowReadout"
as = ["aggregator"]
scorer = "reconstruction-error"
params = { seconds = 0.0 }
"""


def test_an_edited_component_beside_the_scenario_reruns_the_cell(
        tmp_path: Path, slow_attack: Callable[[Path], str]) -> None:
    slow_attack(tmp_path)
    spec = load_spec(write(tmp_path, COMPONENT_SCENARIO, name="own.toml"))
    out = tmp_path / "out"
    run_audit(spec, out)
    messages: list[str] = []
    run_audit(spec, out, progress=messages.append)
    assert messages[0].startswith("1 cells, 1 already done, 0 to run")
    module = tmp_path / "slow_attack.py"
    module.write_text(module.read_text() + "\n# edited\n")
    messages.clear()
    run_audit(load_spec(tmp_path / "own.toml"), out, progress=messages.append)
    assert messages[0].startswith("1 cells, 0 already done, 1 to run")


def test_a_cell_stored_under_the_previous_schema_runs_again(tmp_path: Path) -> None:
    """Cells stored before they recorded the run's privacy and the agreement verdict are
    stale: a resumed audit runs them again rather than reporting what they never held."""
    spec = load_spec(write(tmp_path))
    out = tmp_path / "out"
    cells = run_audit(spec, out)
    stored = out / "cells" / f"{cells[0]['cell']}.json"
    old = json.loads(stored.read_text())
    old["schema_version"] = "1"
    old.pop("privacy", None)
    stored.write_text(json.dumps(old))
    messages: list[str] = []
    again = run_audit(spec, out, progress=messages.append)
    assert messages[0].startswith(f"{len(cells)} cells, {len(cells) - 1} already done, 1 to run")
    rerun = next(c for c in again if c["cell"] == cells[0]["cell"])
    assert rerun["schema_version"] == CELL_SCHEMA_VERSION and "privacy" in rerun
