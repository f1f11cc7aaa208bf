"""``update-noise`` on S-FedMV: the accountant's epsilon for each client's noised updates over
its FedAvg rounds reaches the audit's results and stands in the report's epsilon table beside
the inversion attack's scores, on a tiny audit and in the shipped inversion scenario."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import pytest

from fedsec import registry
from fedsec.audit import load_spec, run_audit
from fedsec.privacy.accountant import DEFAULT_DELTA, run_privacy
from fedsec.privacy.gaussian import gaussian_epsilon
from fedsec.report import build_report

AUDITS = Path(__file__).resolve().parents[2] / "audits"
ROUNDS = 2
SCENARIO = textwrap.dedent(f"""
    [audit]
    name = "tiny_sfedmv_epsilon"
    description = "S-FedMV on tiny keystrokes, update noise, attacked by the server"
    protocols = ["s-fedmv"]
    dataset = "keystrokes:participants=2,sessions=8,min_presses=3,max_presses=5"
    partition = "horizontal:by=site"
    seeds = [0]
    secret_seed = 0

    [params]
    fedavg_rounds = {ROUNDS}
    local_epochs = 1
    hidden = 4
    rounds = 1
    local_rows = 2
    local_baselines = false

    [[defenses]]
    name = "update-noise"
    clip = 1.0
    noise_multiplier = [0.5, 1.0]

    [[attacks]]
    name = "fedavg-inversion"
    as = ["server"]
    params = {{ method = "dlg", steps = 2 }}
""")


def _analytic(noise_multiplier: float) -> float:
    """Epsilon of ROUNDS Gaussian releases of multiplier z: one of multiplier z / sqrt(ROUNDS)."""
    return gaussian_epsilon(noise_multiplier / math.sqrt(ROUNDS), DEFAULT_DELTA)


def test_the_sfedmv_report_shows_update_noises_epsilon_beside_the_inversion(
        tmp_path: Path) -> None:
    pytest.importorskip("torch")
    spec_path = tmp_path / "tiny.toml"
    spec_path.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / "audit"
    run_audit(load_spec(spec_path), out, jobs=1)
    build_report(out)
    report = json.loads((out / "results.json").read_text(encoding="utf-8"))
    by_noise = {}
    for config in report["configurations"]:
        defence = config["config"]["defense"]
        noise = None if defence is None else defence["params"]["noise_multiplier"]
        by_noise[noise] = config
    assert by_noise[None]["privacy"]["epsilon"] is None
    assert not by_noise[None]["privacy"]["noised"]
    rows = {row[0]: row for row in report["privacy"]["rows"]}
    assert len(rows) == 2  # one per defended configuration: the undefended one claims nothing
    markdown = (out / "report.md").read_text(encoding="utf-8")
    for noise in (0.5, 1.0):
        config = by_noise[noise]
        assert abs(config["privacy"]["epsilon"] - _analytic(noise)) < 1e-3
        (attack,) = config["attacks"]
        assert attack["status"] == "ok" and attack["threat"] == "server"
        advantage = attack["metrics"]["advantage"]["mean"]
        row = rows[config["configuration"]]
        assert row[1] == "server"
        assert row[2] == f"{_analytic(noise):.3g} (delta 1e-05)"
        assert row[5] == f"{attack['attack']}: advantage {advantage:.2f}"
        assert "| server | " + row[2] + " |" in markdown


def test_the_shipped_inversion_scenario_accounts_every_defended_configuration() -> None:
    spec = load_spec(AUDITS / "sfedmv_inversion.toml")
    defended = [cell for cell in spec.cells() if cell.defense is not None]
    assert len(defended) == 12
    for cell in defended:
        name, params = cell.defense  # type: ignore[misc]
        defence = registry.create("defense", name, dict(params))
        privacy = run_privacy([defence], defence.configure(cell.params), backend=cell.backend)
        # clip 0.1, noise multiplier 1, two FedAvg rounds
        assert abs(privacy["epsilon"] - _analytic(1.0)) < 1e-3


def test_sfedmvs_own_clip_and_noise_are_accounted_once() -> None:
    own = registry.create("protocol", "s-fedmv", {"clip": 1.0, "noise_multiplier": 1.0,
                                                  "fedavg_rounds": ROUNDS})
    alone = run_privacy([], {}, backend="plain", protocol=own)
    assert abs(alone["epsilon"] - _analytic(1.0)) < 1e-3
    assert [m["protocol"] for m in alone["mechanisms"]] == ["s-fedmv"]
    defence = registry.create("defense", "update-noise", {"clip": 1.0, "noise_multiplier": 1.0})
    configured = defence.configure({"fedavg_rounds": ROUNDS})
    rebuilt = registry.create("protocol", "s-fedmv", configured)  # as a record rebuilds it
    both = run_privacy([defence], configured, backend="plain", protocol=rebuilt)
    assert abs(both["epsilon"] - _analytic(1.0)) < 1e-3  # one release per round, not two
    assert [m["defense"] for m in both["mechanisms"]] == ["update-noise"]
    plain = registry.create("protocol", "s-fedmv", {"fedavg_rounds": ROUNDS})
    assert run_privacy([], {}, backend="plain", protocol=plain)["epsilon"] is None
