"""The report as one self-contained HTML page and as Markdown (plots beside it)."""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fedsec.cost import human_bytes
from fedsec.report.aggregate import LEAKAGE
from fedsec.report.frontier import scoped_ids
from fedsec.report.privacy import PRIVACY_HEAD, PRIVACY_NOTE
from fedsec.report.strongest import STRONGEST_HEAD, summary_rows
from fedsec.report.verdicts import attack_verdict

STRONGEST = ("Per configuration and adversary, the worst result over every attack that applies: "
             "a gain over the naive baseline first, then the most harmful (individual records "
             "before a column space before an aggregate, labels or membership), then the "
             "highest advantage as printed. Protected: every one converged and stayed at its "
             "naive baseline; inconclusive: they stayed at it, but not every one converged; "
             "leaks: the strongest gains over its baseline.")
EXAMPLES = "examples_"
"""The prefix of a plot of reconstructions kept at the scenario's request."""
SHOWN = "Reconstructions (kept at the scenario's request)"

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1200px;color:#1d1d1f;line-height:1.45;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.86em}
th,td{border:1px solid #ddd;padding:.3em .55em;text-align:left;vertical-align:top}
th{background:#f4f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f6f8fa;padding:.8em;overflow:auto;font-size:.82em}
img.plot{max-width:100%;border:1px solid #eee;margin:.5em 0}
figure.plot{margin:.5em 0}
figure.plot svg{width:min(100%,825px);height:auto;border:1px solid #eee}
.muted{color:#666;font-size:.9em}p.worst{font-size:1.05em;background:#fff4f4;
padding:.5em .8em;border-left:4px solid #b00020}h3{font-size:1.1em;margin:.9em 0 .2em}
.bad{color:#b00020}.good{color:#006b3c}
"""


def fmt(stat: Mapping[str, Any] | None, digits: int = 3) -> str:
    """``mean [low, high]`` or ``mean`` or ``—``."""
    if not stat or stat.get("mean") is None:
        return "—"
    text = f"{stat['mean']:.{digits}g}"
    if stat.get("ci"):
        low, high = stat["ci"]
        text += f" [{low:.{digits}g}, {high:.{digits}g}]"
    return text


def attack_rows(configs: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """One row per configuration × attack × threat model."""
    rows = []
    for config in configs:
        for attack in config["attacks"]:
            metrics = attack.get("metrics", {})
            main = [k for k in metrics if not k.startswith("baseline_") and k not in
                    (LEAKAGE, "n_targets", "epsilon")]
            shown = "; ".join(
                f"{k} {fmt(metrics[k])} (baseline {fmt(metrics.get('baseline_' + k))})"
                for k in main) if attack["status"] == "ok" else attack.get("reason") or ""
            rows.append([config["configuration"], attack["attack"], attack["threat"],
                         attack["status"], _converged(attack), fmt(metrics.get(LEAKAGE)),
                         shown])
    return rows


def config_rows(configs: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """One row per configuration: accuracy, agreement, cost."""
    return [[c["configuration"], str(len(c["seeds"])), fmt(c["accuracy"]),
             {True: "yes", False: "NO", None: "—"}[c["agrees_with_reference"]],
             _bytes(c["cost"]["bytes"]), fmt(c["cost"]["messages"], 4),
             fmt(c["cost"]["wall_seconds"]), fmt(c["cost"]["crypto_seconds"])]
            for c in configs]


def _bytes(stat: Mapping[str, Any] | None) -> str:
    """The mean byte count in B, KiB, MiB or GiB."""
    if not stat or stat.get("mean") is None:
        return "—"
    return human_bytes(float(stat["mean"]))


CONFIG_HEAD = ["configuration", "seeds", "accuracy [95% CI]", "matches centralized",
               "bytes on the wire",
               "messages", "protocol time (s)", "crypto time (s)"]
ATTACK_HEAD = ["configuration", "attack", "adversary", "status", "converged",
               "advantage [95% CI]", "metrics (baseline)"]


def _converged(attack: Mapping[str, Any]) -> str:
    """Whether an attack converged on every seed, and how its runs stopped otherwise."""
    if attack["status"] != "ok":
        return "—"
    flag = attack.get("converged")
    stops = ", ".join(s for s in attack.get("stopped", []) if s != "closed-form")
    if flag is True:
        return "closed form" if not stops else "yes"
    head = "no" if flag is False else "not reported"
    help_ = "; more budget would likely help" if attack.get("more_budget_helps") else ""
    return f"{head} ({stops}{help_})" if stops else head


def html_report(report: Mapping[str, Any], plots: Mapping[str, bytes]) -> str:
    """A single HTML document with every plot embedded as a data URI."""
    esc = html.escape
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>{esc(report['name'])}: fedsec audit</title><style>{CSS}</style></head><body>",
             f"<h1>Audit: {esc(report['name'])}</h1>",
             f"<p>{esc(report['description'])}</p>",
             f"<p class='muted'>{report['n_cells']} runs, generated {esc(report['generated'])}, "
             f"fedsec {esc(report['versions'].get('fedsec', '?'))}. {_stored(plots)} "
             "Intervals are 95% normal approximations over seeds.</p>",
             "<h2>Key findings</h2>"]
    if report.get("worst_leak"):
        parts.append(f"<p class='worst'><strong>Worst leak:</strong> "
                     f"{esc(report['worst_leak'])}</p>")
    for headline in report["headlines"]:
        parts.append(f"<section class='headline' data-adversary='{esc(headline['adversary'])}'>"
                     f"<h3>What {esc(headline['adversary'])} learns</h3><ul>")
        parts += [f"<li>{esc(s)}</li>" for s in headline["sentences"]] + ["</ul></section>"]
    if report["what_stops"]:
        parts.append("<h2>What stops each attack</h2><ul class='stops'>")
        parts += [f"<li>{esc(v)}</li>" for v in report["what_stops"]] + ["</ul>"]
    strongest = summary_rows(report["configurations"])
    if strongest:
        parts.append(f"<h2>Strongest attack per adversary</h2><p class='muted'>{esc(STRONGEST)}"
                     "</p>" + _table(STRONGEST_HEAD, strongest).replace(
                         "<table>", "<table class='strongest'>", 1))
    privacy = report.get("privacy") or {}
    if privacy.get("rows") or privacy.get("sentences"):
        parts.append(f"<h2>Epsilon: accountant, empirical bound, reconstruction</h2>"
                     f"<p class='muted'>{esc(PRIVACY_NOTE)}</p><ul class='epsilon'>")
        parts += [f"<li>{esc(s)}</li>" for s in privacy.get("sentences", [])] + ["</ul>"]
        parts.append(_table(PRIVACY_HEAD, privacy.get("rows", [])).replace(
            "<table>", "<table class='epsilon'>", 1))
    for heading, names in (("Leakage versus accuracy", [n for n in plots
                                                        if not n.startswith(EXAMPLES)]),
                           (SHOWN, [n for n in plots if n.startswith(EXAMPLES)])):
        if heading == SHOWN and not names:
            continue
        parts.append(f"<h2>{esc(heading)}</h2>")
        for i, name in enumerate(names):
            if name.endswith(".svg"):  # inline, so that its points name themselves on hover
                svg = scoped_ids(plots[name].decode("utf-8"), f"plot{i}")
                parts.append(f"<figure class='plot svg' data-name='{esc(name)}'>{svg}</figure>")
                continue
            data = base64.b64encode(plots[name]).decode()
            parts.append(f"<img class='plot' alt='{esc(name)}' "
                         f"src='data:image/png;base64,{data}'>")
    if report.get("glossary"):
        parts.append("<h2>Glossary</h2><dl>")
        parts += [f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in report["glossary"].items()]
        parts.append("</dl>")
    parts.append(f"<details><summary>Verdicts per configuration ({len(report['verdicts'])})"
                 "</summary><ul>")
    parts += [f"<li>{esc(v)}</li>" for v in report["verdicts"]] + ["</ul></details>"]
    configs = report["configurations"]
    parts.append("<h2>Configurations</h2>" + _table(CONFIG_HEAD, config_rows(configs)))
    parts.append("<h2>Attacks</h2>" + _table(ATTACK_HEAD, attack_rows(configs)))
    parts.append("<h2>Who learned what</h2>" + _table(
        ["adversary", "attack", "configurations where it recovers (nearly) exactly"],
        [[t, a, ", ".join(c) or "none"] for (t, a), c in report["who_learned"].items()]))
    if report["errors"]:
        parts.append("<h2 class='bad'>Failed runs</h2><ul>")
        parts += [f"<li>{esc(e)}</li>" for e in report["errors"]] + ["</ul>"]
    if report.get("stale_cells"):
        parts.append(f"<p class='muted'>{len(report['stale_cells'])} result file(s) in cells/ "
                     "belong to an earlier version of the scenario and are not counted: "
                     f"{esc(', '.join(report['stale_cells']))}</p>")
    parts.append("<h2>Scenario</h2><pre>" + esc(report["scenario_text"]) + "</pre>")
    parts.append("<h2>Rerun one run</h2><pre>" + esc("\n".join(report["commands"][:50]))
                 + ("\n..." if len(report["commands"]) > 50 else "") + "</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)


def markdown_report(report: Mapping[str, Any], plot_files: Sequence[str]) -> str:
    """The same report in Markdown, plots referenced as files beside it."""
    lines = [f"# Audit: {report['name']}", "", report["description"], "",
             f"{report['n_cells']} runs, generated {report['generated']}. Intervals are 95% normal "
             f"approximations over seeds. {_stored(plot_files)}", "",
             "## Key findings", ""]
    if report.get("worst_leak"):
        lines += [f"**Worst leak:** {report['worst_leak']}", ""]
    for headline in report["headlines"]:
        lines += [f"### What {headline['adversary']} learns", ""]
        lines += [f"- {s}" for s in headline["sentences"]] + [""]
    if report["what_stops"]:
        lines += ["## What stops each attack", ""] + [f"- {v}" for v in report["what_stops"]]
    strongest = summary_rows(report["configurations"])
    if strongest:
        lines += ["", "## Strongest attack per adversary", "", STRONGEST, "",
                  _md_table(STRONGEST_HEAD, strongest)]
    privacy = report.get("privacy") or {}
    if privacy.get("rows") or privacy.get("sentences"):
        lines += ["", "## Epsilon: accountant, empirical bound, reconstruction", "",
                  PRIVACY_NOTE, ""] + [f"- {s}" for s in privacy.get("sentences", [])]
        lines += ["", _md_table(PRIVACY_HEAD, privacy.get("rows", []))]
    lines += ["", "## Leakage versus accuracy", ""]
    lines += [f"![{f}]({f})" for f in plot_files if not _shown(f)]
    if any(_shown(f) for f in plot_files):
        lines += ["", f"## {SHOWN}", ""] + [f"![{f}]({f})" for f in plot_files if _shown(f)]
    lines += ["", "## Verdicts per configuration", ""] + [f"- {v}" for v in report["verdicts"]]
    lines += ["", "## Configurations", "", _md_table(CONFIG_HEAD,
                                                     config_rows(report["configurations"]))]
    lines += ["", "## Attacks", "", _md_table(ATTACK_HEAD, attack_rows(report["configurations"]))]
    if report["errors"]:
        lines += ["", "## Failed runs", ""] + [f"- {e}" for e in report["errors"]]
    if report.get("glossary"):
        lines += ["", "## Glossary", ""] + [f"- **{k}**: {v}" for k, v in
                                            report["glossary"].items()]
    if report.get("stale_cells"):
        lines += ["", f"{len(report['stale_cells'])} result file(s) in cells/ belong to an "
                  "earlier version of the scenario and are not counted: "
                  + ", ".join(report["stale_cells"])]
    return "\n".join(lines) + "\n"


def _shown(name: str) -> bool:
    return name.rsplit("/", 1)[-1].startswith(EXAMPLES)


def _stored(plots: Iterable[str]) -> str:
    """What the report says about reconstructed records."""
    if any(_shown(name) for name in plots):
        return ("Reconstructed records are shown below because the scenario asked for them "
                "(show = N); the cells' files under cells/ hold them too.")
    return "Reconstructed records are never stored (a scenario may ask for a few: show = N)."


def verdict_lines(configs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every configuration's verdicts for the attacks that apply to it."""
    return [f"{c['configuration']}: {attack_verdict(a)}" for c in configs for a in c["attacks"]
            if a["status"] == "ok"]


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    esc = html.escape
    header = "".join(f"<th>{esc(h)}</th>" for h in head)
    out = [f"<table><thead><tr>{header}</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>")
    return "".join(out) + "</tbody></table>"


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
