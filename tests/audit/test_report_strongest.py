"""Protection means the strongest attack failed after converging: the strongest-attack rows
and the inconclusive verdicts of a report."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from fedsec.audit import load_spec, run_audit
from fedsec.report import build_report
from fedsec.report.strongest import owner_of, strongest

SCENARIO = """
[audit]
name = "strongest"
description = "secure sum, read out, and a guess that stops before it converges"
protocols = ["secure-sum"]
dataset = "iris"
backends = ["plain", "noise"]
seeds = [0]

[[attacks]]
name = "contribution-readout"
as = ["aggregator", "party2"]

[[attacks]]
name = "short_guess:ShortGuess"
as = ["aggregator", "party2"]
"""

SHORT_GUESS = '''
from fedsec.attacks.contribution_readout import ContributionReadout
from fedsec.convergence import judge
from fedsec.outcomes import Reconstruction


class ShortGuess(ContributionReadout):
    """Guesses the naive baseline after a descent cut off by its budget (never converges)."""

    closed_form = False

    def run(self, view):
        found = super().run(view)
        record = judge([10.0, 8.0, 6.0, 4.0], budget=4)
        return Reconstruction(attack=self.name, threat=found.threat,
                              estimates=dict(found.baseline), baseline=dict(found.baseline),
                              info={"convergence": record.to_info()})
'''


def entry(attack: str, threat: str, adv: float | None, converged: bool | None,
          targets: tuple[str, ...] = ("party/p1/value/x",), status: str = "ok"
          ) -> dict[str, Any]:
    metrics = {} if adv is None else {"advantage": {"mean": adv}}
    return {"attack": attack, "threat": threat, "status": status, "targets": list(targets),
            "metrics": metrics, "converged": converged}


def test_the_strongest_attack_decides_and_only_converged_failures_protect() -> None:
    rows = {r["threat"]: r for r in strongest([
        entry("a", "server", 0.95, True), entry("b", "server", 0.0, False),
        entry("a", "p2", 0.01, True), entry("b", "p2", -0.2, True),
        entry("a", "p3", 0.02, True), entry("b", "p3", 0.0, None),
        entry("a", "p4", None, None, status="not applicable")])}
    assert (rows["server"]["attack"], rows["server"]["verdict"]) == ("a", "leaks")
    assert rows["p2"]["verdict"] == "protected" and rows["p2"]["attack"] == "a"
    assert rows["p3"]["verdict"] == "inconclusive" and rows["p3"]["not_converged"] == ["b"]
    assert rows["p4"]["verdict"] == "not applicable" and rows["p4"]["attack"] is None


def test_per_target_the_best_attack_that_reaches_it() -> None:
    (row,) = strongest([
        entry("a", "server", 0.3, True, ("party/h1/shard/cell0/X", "party/h2/shard/cell0/X")),
        entry("b", "server", 0.9, True, ("party/h2/shard/cell0/X",))])
    assert row["by_target"]["h1"]["attack"] == "a"
    assert row["by_target"]["h2"] == {"attack": "b", "advantage": 0.9, "converged": True}
    assert owner_of("outcome/gram/total") == "gram/total"


def test_a_report_never_credits_an_attack_that_did_not_converge(tmp_path: Path) -> None:
    (tmp_path / "short_guess.py").write_text(textwrap.dedent(SHORT_GUESS))
    spec_path = tmp_path / "strongest.toml"
    spec_path.write_text(textwrap.dedent(SCENARIO))
    cells = run_audit(load_spec(spec_path), tmp_path / "out")
    assert all(c["status"] == "ok" for c in cells)
    guesses = [a for c in cells for a in c["attacks"] if a["attack"] == "short_guess:ShortGuess"]
    assert guesses and all(a["convergence"]["stopped"] == "budget" for a in guesses)
    readouts = [a for c in cells for a in c["attacks"] if a["attack"] == "contribution-readout"]
    assert all(a["convergence"]["stopped"] == "closed-form" for a in readouts)

    report = build_report(tmp_path / "out")
    stops = " ".join(report["what_stops"])
    assert "short_guess:ShortGuess as aggregator falls to" not in stops
    assert "Nothing in this audit is shown to stop short_guess:ShortGuess as aggregator" in stops
    for config in report["configurations"]:
        adversaries = {a["threat"] for a in config["attacks"]}
        assert {r["threat"] for r in config["strongest"]} == adversaries
    masked = next(c for c in report["configurations"] if c["config"]["backend"] == "noise")
    row = next(r for r in masked["strongest"] if r["threat"] == "aggregator")
    assert row["verdict"] == "inconclusive"
    assert row["not_converged"] == ["short_guess:ShortGuess"]
    plain = next(c for c in report["configurations"] if c["config"]["backend"] == "plain")
    row = next(r for r in plain["strongest"] if r["threat"] == "aggregator")
    assert (row["attack"], row["verdict"]) == ("contribution-readout", "leaks")

    html = (tmp_path / "out" / "report.html").read_text()
    assert "Strongest attack per adversary" in html and "inconclusive" in html
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "## Strongest attack per adversary" in markdown
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert all("strongest" in c for c in saved["configurations"])


def test_the_strongest_attack_is_ranked_by_harm_as_the_worst_leak_is() -> None:
    records = ("party/h1/shard/cell0/X",)
    gram = ("outcome/gram/total",)
    (row,) = strongest([entry("gram", "server", 0.99999999996, True, gram),
                        entry("rows", "server", 0.99999999993, True, records)])
    assert row["attack"] == "rows"  # the same advantage as printed: records are worse
    (row,) = strongest([entry("gram", "server", 0.6, True, gram),
                        entry("rows", "server", 0.02, True, records)])
    assert (row["attack"], row["verdict"]) == ("gram", "leaks")  # records at the baseline
    (row,) = strongest([entry("a", "server", 0.30000000001, True, records),
                        entry("b", "server", 0.3, True, records + gram)])
    assert row["attack"] == "a"  # a tie as printed keeps the first
    assert row["by_target"]["h1"]["attack"] == "a"
