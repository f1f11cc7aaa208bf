"""The leakage-versus-utility frontier: one point per configuration, the Pareto set marked,
drawn as SVG whose every point names its configuration on hover (no script, no network)."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from fedsec.report.aggregate import pareto_front, utility
from fedsec.report.plots import _figure, family, legends_below, palette, title_height, wrapped
from fedsec.report.precision import printed_advantage, printed_metric
from fedsec.report.wording import advantage_of, verdict_level

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

#: Where a point of the frontier sits: on the advantage axis, or in the strip beside it.
MEASURED, INCONCLUSIVE, NOT_APPLICABLE = "measured", "inconclusive", "not applicable"
#: The strip's columns, in order, with their tick labels.
STRIP = {NOT_APPLICABLE: "not\napplicable", INCONCLUSIVE: "incon-\nclusive"}


class Point(NamedTuple):
    """One configuration on the frontier: its advantage (None where the attack did not
    apply or scored nothing), its utility, where it is drawn, and the configuration."""

    advantage: float | None
    utility: float
    state: str
    config: Mapping[str, Any]


def frontier_points(configs: Sequence[Mapping[str, Any]], attack: str, threat: str
                    ) -> tuple[list[Point], list[tuple[float, float]], str]:
    """The frontier's points, its Pareto set (from the measured points only, compared at the
    precision the report prints: :mod:`fedsec.report.precision`), and the utility's name.

    The utility is the test accuracy (higher is better) or, for a protocol without one, its
    error against the exact result (lower is better; the Pareto set follows the direction).
    A point is ``measured``, ``inconclusive`` (at its baseline without converging: its
    advantage proves nothing) or ``not applicable`` (or not scored); only measured points
    have a place on the advantage axis.

    Examples
    --------
    >>> def config(adv, acc, status="ok"):
    ...     return {"accuracy": {"mean": acc}, "attacks": [
    ...         {"attack": "a", "threat": "t", "status": status, "converged": True,
    ...          "targets": ["x"], "metrics": {"advantage": {"mean": adv}}}]}
    >>> points, best, name = frontier_points([config(1.0, 0.9), config(0.2, 0.8),
    ...                                       config(0.99999999993, 0.53),
    ...                                       config(None, 0.95, "not applicable")], "a", "t")
    >>> [p.state for p in points], best, name
    (['measured', 'measured', 'measured', 'not applicable'], [(0.2, 0.8), (1.0, 0.9)], 'accuracy')
    """
    points: list[Point] = []
    names = set()
    for config in configs:
        found = utility(config)
        entry = next((a for a in config["attacks"]
                      if a["attack"] == attack and a["threat"] == threat), None)
        if found is None or found[1].get("mean") is None or entry is None:
            continue
        names.add(found[0])
        adv = advantage_of(entry) if entry["status"] == "ok" else None
        state = (NOT_APPLICABLE if adv is None else INCONCLUSIVE
                 if verdict_level(entry) == "inconclusive" else MEASURED)
        points.append(Point(adv, float(found[1]["mean"]), state, config))
    name = sorted(names)[0] if len(names) == 1 else "accuracy"
    if len(names) > 1:  # mixed utilities cannot share an axis: keep the accuracies
        points = [p for p in points if p.config["accuracy"].get("mean") is not None]
    measured = [p for p in points if p.state == MEASURED]
    sign = 1.0 if name == "accuracy" else -1.0  # an error is better low
    front = pareto_front([printed_advantage(float(p.advantage or 0.0)) for p in measured],
                         [sign * printed_metric(p.utility) for p in measured])
    best = sorted((float(p.advantage or 0.0), p.utility)
                  for p, f in zip(measured, front, strict=True) if f)
    return points, best, name


def frontier_svg(configs: Sequence[Mapping[str, Any]], attack: str, threat: str
                 ) -> bytes | None:
    """Leakage (attack advantage) against utility as SVG, one point per configuration.

    A configuration in which the attack does not apply (or scored nothing), or where it
    stayed at its baseline without converging (inconclusive), has no advantage to draw: it
    sits in a strip beside the axis, in its own column, and never in the Pareto set. The axis
    holds negative advantages. Configurations that land on the same point are labelled with
    how many share it ("×3"), and every point names its configuration (all of them, where
    several share it) in a tooltip. Each configuration family keeps the colour it has in
    every plot of the report (:func:`fedsec.report.plots.palette`).
    """
    plt = _figure()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "fedsec"}):
        drawn = frontier_figure(configs, attack, threat)
        if drawn is None:
            return None
        fig, tooltips = drawn
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg")
    plt.close(fig)
    return with_tooltips(buffer.getvalue(), tooltips)


_STYLES = {MEASURED: ("o", True), NOT_APPLICABLE: ("o", False), INCONCLUSIVE: ("D", False)}


def frontier_figure(configs: Sequence[Mapping[str, Any]], attack: str, threat: str
                    ) -> tuple[Any, dict[str, list[tuple[str, str]]]] | None:
    """The frontier's matplotlib figure, and the configuration and tooltip of each point by
    marker group."""
    points, best, name = frontier_points(configs, attack, threat)
    if not points:
        return None
    plt = _figure()
    columns = [state for state in STRIP if any(p.state == state for p in points)]
    if columns:
        fig, (ax, strip) = plt.subplots(1, 2, figsize=(7.5, 5.0), dpi=110, sharey=True,
                                        gridspec_kw={"width_ratios": [6.0, 0.8 * len(columns)]})
    else:
        fig, ax = plt.subplots(figsize=(7.5, 5.0), dpi=110)
        strip = None
    colours = palette(configs)
    series: dict[str, list[Point]] = defaultdict(list)
    for point in points:
        series[family(point.config["config"])].append(point)
    shared: dict[tuple[str, float, float], list[str]] = defaultdict(list)
    for point in points:
        shared[_spot(point, columns)].append(point.config["configuration"])
    tooltips: dict[str, list[tuple[str, str]]] = {}
    for i, (label, pts) in enumerate(sorted(series.items())):
        color = colours.get(label, f"C{i % 10}")
        ax.scatter([], [], s=46, color=color, label=label)  # the family, in the legend
        for state, (marker, filled) in _STYLES.items():
            chosen = [p for p in pts if p.state == state]
            if not chosen:
                continue
            gid = f"points-{i}-{state.replace(' ', '-')}"
            style = ({"color": color, "alpha": 0.85} if filled
                     else {"facecolors": "none", "edgecolors": color})
            target = ax if state == MEASURED else strip
            spots = [_spot(p, columns) for p in chosen]
            target.scatter([s[1] for s in spots], [s[2] for s in spots], s=46, gid=gid,
                           marker=marker, **style)
            tooltips[gid] = [(p.config["configuration"],
                              _tooltip(p, name, shared[_spot(p, columns)])) for p in chosen]
    for (where, x, y), labels in shared.items():
        if len(labels) > 1:
            (ax if where == MEASURED else strip).annotate(
                f"×{len(labels)}", (x, y), textcoords="offset points", xytext=(6, 5),
                fontsize=7, color="#333333")
    if best:
        ax.plot(*zip(*best, strict=True), color="black", lw=1.2, ls="--",
                label="Pareto set (compared as printed)")
        ax.scatter(*zip(*best, strict=True), s=120, facecolors="none", edgecolors="black")
    for state in columns:
        marker, _ = _STYLES[state]
        ax.scatter([], [], s=46, marker=marker, facecolors="none", edgecolors="#555555",
                   label=f"{state} (in the strip on the right: no advantage to draw)")
    ax.set_xlabel(f"leakage: {attack} as {threat} (advantage over the naive baseline)")
    ax.set_ylabel("test accuracy" if name == "accuracy" else f"{name} (lower is better)")
    drawn = [p.advantage for p in points if p.state == MEASURED and p.advantage is not None]
    ax.set_xlim(min(-0.05, min(drawn, default=0.0) - 0.05), 1.05)
    ax.grid(alpha=0.3)
    if strip is not None:
        strip.set_xlim(-0.6, len(columns) - 0.4)
        strip.set_xticks(range(len(columns)), [STRIP[c] for c in columns], fontsize=7)
        strip.tick_params(axis="y", left=False, labelleft=False)
        strip.grid(alpha=0.3, axis="y")
        strip.set_facecolor("#f4f4f6")
    title = wrapped(f"Leakage versus {'accuracy' if name == 'accuracy' else name}: "
                    f"{attack} as {threat} (hover over a point for its configuration)", 7.5, 9)
    fig.suptitle(title, fontsize=9)
    legends_below(fig, [ax], fontsize=7, axes_height=4.1, left=0.1, right=0.97, wspace=0.04,
                  top_in=title_height(title, 9))
    return fig, tooltips


def _spot(point: Point, columns: Sequence[str]) -> tuple[str, float, float]:
    """Where a point is drawn: on the advantage axis, or in its column of the strip."""
    if point.state == MEASURED:
        return MEASURED, round(float(point.advantage or 0.0), 9), round(point.utility, 9)
    return point.state, float(columns.index(point.state)), round(point.utility, 9)


def _tooltip(point: Point, name: str, together: Sequence[str]) -> str:
    head = {MEASURED: f"advantage {float(point.advantage or 0.0):.3f}",
            INCONCLUSIVE: f"inconclusive (advantage {float(point.advantage or 0.0):.3f}, "
                          "did not converge)",
            NOT_APPLICABLE: "not applicable or not measured"}[point.state]
    lines = [f"{head}, {name} {point.utility:.4g}", *together[:12]]
    if len(together) > 12:
        lines.append(f"... and {len(together) - 12} more")
    return "\n".join(lines)


def with_tooltips(svg: bytes, tooltips: Mapping[str, Sequence[tuple[str, str]]]) -> bytes:
    """Give each marker of the groups named in ``tooltips`` its text as an SVG ``<title>``
    (the browser shows it on hover) and its own configuration as ``data-configuration``, in
    the order the markers were drawn."""
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(svg)  # noqa: S314 (matplotlib's own output, just drawn)
    for group in root.iter(f"{{{SVG_NS}}}g"):
        texts = tooltips.get(group.get("id", ""))
        if texts is None:
            continue
        markers = [(parent, child) for parent in group.iter()  # <use>, or a <path> each
                   if parent.tag != f"{{{SVG_NS}}}defs" for child in list(parent)
                   if child.tag in (f"{{{SVG_NS}}}use", f"{{{SVG_NS}}}path")]
        for (parent, marker), (configuration, text) in zip(markers, texts, strict=False):
            wrapper = ET.Element(f"{{{SVG_NS}}}g", {"class": "point",
                                                    "data-configuration": configuration})
            title = ET.SubElement(wrapper, f"{{{SVG_NS}}}title")
            title.text = text
            index = list(parent).index(marker)
            parent.remove(marker)
            wrapper.append(marker)
            parent.insert(index, wrapper)
    return ET.tostring(root, encoding="utf-8")


def scoped_ids(svg: str, prefix: str) -> str:
    """Prefix every id of an SVG (and the references to them) so that several SVGs can sit
    in one HTML page without sharing ids.

    Examples
    --------
    >>> scoped_ids('<path id="a"/><use xlink:href="#a"/><g clip-path="url(#a)"/>', "p1")
    '<path id="p1-a"/><use xlink:href="#p1-a"/><g clip-path="url(#p1-a)"/>'
    """
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}-{m.group(1)}"', svg)
    return re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", svg)
