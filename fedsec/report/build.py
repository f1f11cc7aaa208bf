"""Assemble a report from an audit directory."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from fedsec.errors import ValidationError
from fedsec.report.aggregate import LEAKAGE, configurations
from fedsec.report.annotate import annotate
from fedsec.report.examples import examples_plots
from fedsec.report.frontier import frontier_svg
from fedsec.report.headlines import headlines, worst_leak
from fedsec.report.plots import rounds_png
from fedsec.report.privacy import privacy_png, privacy_rows, privacy_sentences
from fedsec.report.render import EXAMPLES, html_report, markdown_report, verdict_lines
from fedsec.report.stops import what_stops
from fedsec.report.strongest import strongest
from fedsec.report.sweeps import defence_png, defended_parameters, sweep_png
from fedsec.report.tidy import write_tidy
from fedsec.report.wording import level
from fedsec.results import write_atomically, write_json

REPORT_SCHEMA_VERSION = "1"


def build_report(out_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Write ``report.html``, ``report.md``, ``plots/``, ``results.json`` and the tidy
    ``results.csv``/``results.parquet``; return the data."""
    out = Path(out_dir)
    scenario_path = out / "scenario.json"
    cell_files = sorted((out / "cells").glob("*.json"))
    if not scenario_path.is_file() or not cell_files:
        raise ValidationError(f"{out} holds no audit results (scenario.json and cells/*.json); "
                              "run 'fedsec audit SPEC.toml --out DIR' first.")
    try:
        scenario = json.loads(scenario_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValidationError(f"{scenario_path} is unreadable ({error}); run 'fedsec audit' "
                              "again to rewrite it.") from None
    every, unreadable = _read_cells(cell_files)
    wanted = _scenario_cells(scenario)
    cells = [c for c in every if wanted is None or c.get("cell") in wanted]
    stale = sorted([c.get("cell", "?") for c in every if c not in cells] + unreadable)
    if not cells:
        raise ValidationError(f"{out} holds no result of its scenario's cells (only {len(stale)} "
                              "stale ones from an earlier scenario); run 'fedsec audit' again.")
    configs = sorted(configurations(cells), key=_order)
    names = [str(a.get("name", "")) for a in scenario["scenario"].get("attacks", [])]
    scorers = annotate(configs, names, scenario.get("base_dir", "."))
    for config in configs:
        config["strongest"] = strongest(config["attacks"])
    pairs = sorted({(a["attack"], a["threat"]) for c in configs for a in c["attacks"]})
    plots = _plots(configs, cells, scenario["scenario"], pairs)
    found = headlines(configs)
    epsilon = privacy_sentences(configs, cells)
    report = {
        "schema_version": REPORT_SCHEMA_VERSION, "name": scenario["name"],
        "description": scenario["description"], "source": scenario["source"],
        "generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": scenario["versions"], "n_cells": len(cells),
        "scenario": scenario["scenario"], "scenario_text": _scenario_text(scenario),
        "configurations": configs, "verdicts": verdict_lines(configs),
        "worst_leak": worst_leak(configs), "headlines": found,
        "key_findings": [f"{h['adversary']}: {' '.join(h['sentences'])}" for h in found]
        + epsilon,
        "privacy": {"sentences": epsilon, "rows": privacy_rows(configs)},
        "what_stops": what_stops(configs), "who_learned": _who_learned(configs),
        "errors": [f"{c['configuration']} seed {c['config']['seed']}: {c.get('error')}"
                   for c in cells if c["status"] != "ok"],
        "stale_cells": stale,
        "glossary": glossary(configs, scorers),
        "commands": [c["command"] for c in cells],
    }
    (out / "plots").mkdir(exist_ok=True)
    for old in (out / "plots").iterdir():  # an earlier build's plots that are gone now
        if old.suffix in (".png", ".svg") and old.name not in plots:
            old.unlink()
    for name, data in plots.items():
        _write_bytes(out / "plots" / name, data)
    _write_text(out / "report.html", html_report(report, plots))
    _write_text(out / "report.md", markdown_report(report, [f"plots/{n}" for n in plots]))
    json_report = {**report, "who_learned": [{"threat": t, "attack": a, "configurations": c}
                                             for (t, a), c in report["who_learned"].items()],
                   "cells": cells, "plots": sorted(plots)}
    write_json(out / "results.json", json_report)
    write_tidy(out, cells)
    return json_report


def _plots(configs: list[dict[str, Any]], cells: list[dict[str, Any]],
           scenario: dict[str, Any], pairs: list[tuple[str, str]]) -> dict[str, bytes]:
    """Every plot of the report by file name: frontiers (SVG, hover for configurations),
    leakage per round, sweeps of protocol and defence parameters, kept reconstructions."""
    metric = str(scenario.get("report", {}).get("metric", LEAKAGE))
    plots: dict[str, bytes] = {}
    for attack, threat in pairs:
        svg = frontier_svg(configs, attack, threat)
        if svg is not None:
            plots[f"frontier_{_slug(attack)}_{_slug(threat)}.svg"] = svg
        png = rounds_png(cells, attack, threat)
        if png is not None:
            plots[f"rounds_{_slug(attack)}_{_slug(threat)}.png"] = png
    swept = list(scenario.get("sweep", {}))
    for parameter in swept:
        png = sweep_png(configs, parameter, pairs, others=swept, metric=metric)
        if png is not None:
            plots[f"sweep_{_slug(parameter)}.png"] = png
    for defence, parameter in defended_parameters(configs):
        png = defence_png(configs, defence, parameter, pairs, metric=metric)
        if png is not None:
            plots[f"defence_{_slug(defence)}_{_slug(parameter)}.png"] = png
        png = privacy_png(configs, defence, parameter)
        if png is not None:
            plots[f"epsilon_{_slug(defence)}_{_slug(parameter)}.png"] = png
    for (attack, threat, configuration), png in examples_plots(cells).items():
        plots[f"{EXAMPLES}{_slug(attack)}_{_slug(threat)}_{_slug(configuration)}.png"] = png
    return plots


BASELINE = ("each attack's naive guess from what the adversary legitimately learns (for "
            "example the mean of its own records); every metric is shown next to the "
            "baseline's value (baseline_NAME).")
ADVANTAGE = ("how much of the gap between the naive baseline and exact recovery the attack "
             "closes (1 - error / the baseline's error): 1 is exact, 0 the baseline, negative "
             "worse than the baseline. The findings say '(nearly) exactly' from 0.9, 'a large "
             "part' from 0.5, 'a part' from 0.1, and 'nothing beyond the naive baseline' below, "
             "and compare advantages as printed, to two decimals (as the Pareto sets, the worst "
             "leak and what stops each attack do); each scorer's own definition follows as "
             "'advantage (scorer)'.")


def glossary(configs: list[dict[str, Any]], scorers: dict[str, Any]) -> dict[str, str]:
    """Definitions of the metrics the report shows, from the scorers that reported them."""
    shown: dict[str, set[str]] = defaultdict(set)
    for config in configs:
        for attack in config["attacks"]:
            shown[attack["scorer"]].update(k for k in attack.get("metrics", {})
                                           if not k.startswith("baseline_"))
    out = {"baseline": BASELINE, "advantage": ADVANTAGE}
    for scorer, metrics in sorted(shown.items()):
        definitions = getattr(scorers.get(scorer), "glossary", {})
        for metric in sorted(metrics - {"n_targets", "epsilon"}):
            text = definitions.get(metric, "(the scorer gives no definition)")
            key = metric if metric not in out or out[metric] == text else f"{metric} ({scorer})"
            out[key] = text
    return out


def _read_cells(paths: list[Path]) -> tuple[list[dict[str, Any]], list[str]]:
    """The cell results that parse, and the names of the files that do not (a damaged cell
    is left out of the report like a stale one, and so is one that is not a cell result
    of the id its name gives; the next 'fedsec audit' reruns it)."""
    from fedsec.audit.cell import stored_cell_problem

    cells, unreadable = [], []
    for path in paths:
        try:
            cell = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            cell = None
        if stored_cell_problem(cell, path.stem) is None:  # the schema and the file's id
            cells.append(cell)
        else:
            unreadable.append(f"{path.stem} (unreadable)")
    return cells, unreadable


def _scenario_cells(scenario: dict[str, Any]) -> set[str] | None:
    """The ids of the cells the scenario defines now (None when it no longer parses here)."""
    from fedsec.audit.spec import parse_spec
    from fedsec.errors import FedsecError

    try:
        spec = parse_spec(scenario["scenario"], source=scenario.get("source", "scenario"),
                          base_dir=scenario.get("base_dir", "."))
    except FedsecError:
        return None
    return {cell.id for cell in spec.cells()}


def _order(config: dict[str, Any]) -> tuple[Any, ...]:
    """Protocol, backend, defence, then parameter values in numeric order."""
    c = config["config"]
    defence = "" if c["defense"] is None else json.dumps(c["defense"], sort_keys=True)
    params = tuple((k, (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)))
                   for k, v in sorted(c["params"].items()))
    return (c["protocol"], c.get("dataset", ""), c["backend"], defence, params)


def _who_learned(configs: list[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for config in configs:
        for attack in config["attacks"]:
            key = (attack["threat"], attack["attack"])
            out.setdefault(key, [])
            adv = attack.get("metrics", {}).get(LEAKAGE, {}).get("mean")
            if attack["status"] == "ok" and level(adv, len(attack.get("targets", []))) == "exact":
                out[key].append(config["configuration"])
    return dict(out)


def _scenario_text(scenario: dict[str, Any]) -> str:
    source = Path(scenario["source"])
    if source.is_file():
        return source.read_text(encoding="utf-8")
    return json.dumps(scenario["scenario"], indent=2, sort_keys=True)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def _write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically, owner-only, through a fresh temporary file (never through a
    link planted beside ``path``)."""
    _write_bytes(path, text.encode("utf-8"))


def _write_bytes(path: Path, data: bytes) -> None:
    def write(tmp: Path) -> None:
        tmp.write_bytes(data)

    write_atomically(path, write)
