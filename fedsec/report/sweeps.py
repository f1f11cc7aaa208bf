"""Line plots against a swept value: a protocol parameter of the scenario's ``[sweep]``, or a
defence's parameter (its cost beside its effect). Utility on the left, leakage on the right.

Each configuration family keeps the colour it has in every plot of the report (lines of one
family, at other settings, are shades of it with their own markers). An attack that does not
apply draws no point, and neither does one that stayed at its baseline without converging
(inconclusive: its advantage proves nothing); the legend counts those left out."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.report.aggregate import LEAKAGE, utility
from fedsec.report.plots import (
    _figure,
    _png,
    family,
    integer_ticks,
    legends_below,
    line_styles,
    palette,
    title_height,
    wrapped,
)
from fedsec.report.wording import verdict_level

#: A line's points: (x, utility or None, {attack label: value}, attack labels inconclusive).
Points = list[tuple[float, float | None, dict[str, float], frozenset[str]]]


def sweep_png(configs: Sequence[Mapping[str, Any]], parameter: str,
              attacks: Sequence[tuple[str, str]], others: Sequence[str] = (),
              metric: str = LEAKAGE) -> bytes | None:
    """Utility and each attack's ``metric`` against one swept protocol parameter.

    One line per protocol, backend, defence and its settings, dataset and value of every
    ``others`` swept parameter, so that no line joins points that differ in anything but
    ``parameter``.
    """
    series: dict[str, Points] = defaultdict(list)
    families: dict[str, str] = {}
    for config in configs:
        c = config["config"]
        value = c["params"].get(parameter)
        if not isinstance(value, (int, float)):
            continue
        label = family(c)
        fixed = [f"{key}={value}" for key, value in
                 sorted((c["defense"] or {}).get("params", {}).items())]  # a line per setting
        fixed += [f"{name}={c['params'][name]}" for name in others
                  if name != parameter and name in c["params"]]
        line = label + (f" ({', '.join(fixed)})" if fixed else "")
        series[line].append((float(value), _utility(config),
                             *_values(config, attacks, metric)))
        families[line] = label
    if not series:
        return None
    return _lines_png(series, {}, families, palette(configs), parameter,
                      _utility_name(configs), metric,
                      f"{_utility_name(configs).capitalize()} and leakage against {parameter}")


def defence_png(configs: Sequence[Mapping[str, Any]], defence: str, parameter: str,
                attacks: Sequence[tuple[str, str]], metric: str = LEAKAGE) -> bytes | None:
    """What a defence costs and what it stops, against one of its numeric parameters.

    The left panel is the protocol's utility (accuracy, or for a protocol without one such
    as a secure sum, the error the defence adds to its result), the right each attack's
    ``metric``; the same configurations without the defence are dashed lines.
    """
    series: dict[str, Points] = defaultdict(list)
    undefended: dict[str, tuple[float | None, dict[str, float]]] = {}
    bases: dict[str, str] = {}
    families: dict[str, str] = {}
    for config in configs:
        c = config["config"]
        label = " / ".join([c["protocol"], *([c["dataset"]] if c.get("dataset") else []),
                            c["backend"], *(f"{k}={v}" for k, v in sorted(c["params"].items()))])
        if c["defense"] is None:
            undefended[label] = (_utility(config), _values(config, attacks, metric)[0])
            continue
        value = c["defense"]["params"].get(parameter)
        if c["defense"]["name"] != defence or not isinstance(value, (int, float)):
            continue
        others = [f"{k}={v}" for k, v in sorted(c["defense"]["params"].items()) if k != parameter]
        line = label + (f" ({', '.join(others)})" if others else "")
        series[line].append((float(value), _utility(config),
                             *_values(config, attacks, metric)))
        bases[line] = label
        families[line] = family(c)
    if not series:
        return None
    reference = {line: undefended[label] for line, label in bases.items() if label in undefended}
    return _lines_png(series, reference, families, palette(configs), f"{defence}: {parameter}",
                      _utility_name(configs), metric,
                      f"What {defence} costs and what it stops, against {parameter}")


def defended_parameters(configs: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Each (defence, parameter) the audit tries at two or more numeric values."""
    values: dict[tuple[str, str], set[float]] = defaultdict(set)
    for config in configs:
        defence = config["config"]["defense"]
        if defence is None:
            continue
        for key, value in defence["params"].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                values[(defence["name"], key)].add(float(value))
    return sorted(key for key, seen in values.items() if len(seen) > 1)


def _lines_png(series: Mapping[str, Points],
               reference: Mapping[str, tuple[float | None, dict[str, float]]],
               families: Mapping[str, str], colours: Mapping[str, str], xlabel: str,
               utility_name: str, metric: str, title: str) -> bytes:
    plt = _figure()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    xs_all = sorted({p[0] for pts in series.values() for p in pts})
    styles = line_styles(list(series), families, colours)
    for label, pts in sorted(series.items()):
        color, marker = styles[label]["color"], styles[label]["marker"]
        pts = sorted(pts, key=lambda p: p[0])
        xs = [p[0] for p in pts]
        left.plot(xs, [math.nan if p[1] is None else p[1] for p in pts], marker=marker,
                  color=color, label=label)
        base = reference.get(label)
        if base is not None and base[0] is not None:
            left.plot([xs_all[0], xs_all[-1]], [base[0]] * 2, color=color, ls="--", lw=1,
                      label=f"{label}: without the defence")
        for j, name in enumerate(sorted({k for p in pts for k in (*p[2], *p[3])})):
            style = ("-", "--", ":", "-.")[j % 4]
            left_out = sum(name in p[3] for p in pts)
            note = (f" ({left_out} inconclusive point{'s' if left_out > 1 else ''} not drawn)"
                    if left_out else "")
            right.plot(xs, [p[2].get(name, math.nan) for p in pts], marker=marker,
                       color=color, ls=style, label=f"{label}: {name}{note}")
            if base is not None and name in base[1]:
                right.plot([xs_all[0], xs_all[-1]], [base[1][name]] * 2, color=color,
                           ls="--", lw=1, alpha=0.6, label=f"{label}: {name}, without the "
                                                            "defence")
    for ax in (left, right):
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    left.set_ylabel("test accuracy" if utility_name == "accuracy"
                    else f"{utility_name} (the cost)")
    right.set_ylabel("attack advantage" if metric == LEAKAGE else metric)
    values = [v for pts in series.values() for p in pts for v in p[2].values()
              if math.isfinite(v)]
    if metric == LEAKAGE:  # negative advantages (worse than the baseline) stay on the axis
        right.set_ylim(min([-0.05, *(v - 0.05 for v in values)]), 1.05)
    if xs_all and xs_all[0] > 0 and xs_all[-1] / xs_all[0] >= 100:
        for ax in (left, right):
            ax.set_xscale("log")
    elif all(x.is_integer() for x in xs_all):  # an integer parameter gets integer ticks
        integer_ticks(left, right)
    title = wrapped(title, 11, 10)
    fig.suptitle(title, fontsize=10)
    legends_below(fig, [left, right], fontsize=6, axes_height=3.3, left=0.07, right=0.985,
                  wspace=0.22, top_in=title_height(title, 10))
    return _png(fig, plt)


def _utility(config: Mapping[str, Any]) -> float | None:
    found = utility(config)
    return None if found is None else found[1].get("mean")


def _utility_name(configs: Sequence[Mapping[str, Any]]) -> str:
    names = {found[0] for c in configs if (found := utility(c)) is not None}
    return names.pop() if len(names) == 1 else "accuracy"


def _values(config: Mapping[str, Any], attacks: Sequence[tuple[str, str]],
            metric: str) -> tuple[dict[str, float], frozenset[str]]:
    """Each applicable attack's ``metric``, and the attacks left out as inconclusive
    (attacks that do not apply draw no point, nor do inconclusive ones)."""
    out, unsure = {}, set()
    for attack, threat in attacks:
        entry = next((a for a in config["attacks"]
                      if a["attack"] == attack and a["threat"] == threat), None)
        if entry is None or entry["status"] != "ok":
            continue
        if verdict_level(entry) == "inconclusive":
            unsure.add(f"{attack} as {threat}")
            continue
        value = entry.get("metrics", {}).get(metric, {}).get("mean")
        if value is not None:
            out[f"{attack} as {threat}"] = float(value)
    return out, frozenset(unsure)
