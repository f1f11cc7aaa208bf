"""The leakage-versus-utility frontier: one point per configuration, the Pareto set marked,
drawn as SVG whose every point names its configuration on hover (no script, no network)."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.report.aggregate import LEAKAGE, pareto_front, utility
from fedsec.report.plots import _figure, legends_below

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

Point = tuple[float, float, bool, Mapping[str, Any]]


def frontier_points(configs: Sequence[Mapping[str, Any]], attack: str, threat: str
                    ) -> tuple[list[Point], list[tuple[float, float]], str]:
    """The frontier's points ``(advantage, utility, measured, configuration)``, its Pareto
    set (from the measured points only), and the utility's name.

    The utility is the test accuracy (higher is better) or, for a protocol without one, its
    error against the exact result (lower is better; the Pareto set follows the direction).

    Examples
    --------
    >>> def config(adv, acc, status="ok"):
    ...     return {"accuracy": {"mean": acc}, "attacks": [
    ...         {"attack": "a", "threat": "t", "status": status,
    ...          "metrics": {"advantage": {"mean": adv}}}]}
    >>> points, best, name = frontier_points([config(1.0, 0.9), config(0.2, 0.8),
    ...                                       config(None, 0.95, "not applicable")], "a", "t")
    >>> [p[2] for p in points], best, name
    ([True, True, False], [(0.2, 0.8), (1.0, 0.9)], 'accuracy')
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
        adv = (entry.get("metrics", {}).get(LEAKAGE, {}).get("mean")
               if entry["status"] == "ok" else None)
        points.append((0.0 if adv is None else adv, float(found[1]["mean"]), adv is not None,
                       config))
    name = sorted(names)[0] if len(names) == 1 else "accuracy"
    if len(names) > 1:  # mixed utilities cannot share an axis: keep the accuracies
        points = [p for p in points if p[3]["accuracy"].get("mean") is not None]
    measured = [p for p in points if p[2]]
    sign = 1.0 if name == "accuracy" else -1.0  # an error is better low
    front = pareto_front([p[0] for p in measured], [sign * p[1] for p in measured])
    best = sorted((p[0], p[1]) for p, f in zip(measured, front, strict=True) if f)
    return points, best, name


def frontier_svg(configs: Sequence[Mapping[str, Any]], attack: str, threat: str
                 ) -> bytes | None:
    """Leakage (attack advantage) against utility as SVG, one point per configuration.

    A configuration in which the attack does not apply, or where its advantage is not
    defined (nothing to gain over the baseline), is drawn apart: at advantage 0 with a hollow
    marker, and never in the Pareto set. The axis holds negative advantages. Configurations
    that land on the same point are labelled with how many share it ("×3"), and every point
    names its configuration (all of them, where several share it) in a tooltip.
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


def frontier_figure(configs: Sequence[Mapping[str, Any]], attack: str, threat: str
                    ) -> tuple[Any, dict[str, list[str]]] | None:
    """The frontier's matplotlib figure, and the tooltip of each point by marker group."""
    points, best, name = frontier_points(configs, attack, threat)
    if not points:
        return None
    plt = _figure()
    fig, ax = plt.subplots(figsize=(7.5, 5.0), dpi=110)
    series: dict[str, list[Point]] = defaultdict(list)
    for point in points:
        c = point[3]["config"]
        defence = c["defense"]["name"] if c["defense"] else "no defence"
        series[f"{c['protocol']} / {c['backend']} / {defence}"].append(point)
    shared: dict[tuple[float, float], list[str]] = defaultdict(list)
    for adv, value, _, config in points:
        shared[(round(adv, 9), round(value, 9))].append(config["configuration"])
    tooltips: dict[str, list[str]] = {}
    for i, (label, pts) in enumerate(sorted(series.items())):
        color = f"C{i % 10}"
        for applies in (True, False):
            chosen = [p for p in pts if p[2] is applies]
            if not chosen:
                continue
            gid = f"points-{i}-{int(applies)}"
            style = ({"color": color, "alpha": 0.85} if applies
                     else {"facecolors": "none", "edgecolors": color})
            ax.scatter([p[0] for p in chosen], [p[1] for p in chosen], s=46, gid=gid,
                       label=label if applies else f"{label} (not applicable or not "
                                                   "measured)", **style)
            tooltips[gid] = [_tooltip(p, name, shared) for p in chosen]
    for (x, y), labels in shared.items():
        if len(labels) > 1:
            ax.annotate(f"×{len(labels)}", (x, y), textcoords="offset points",
                        xytext=(6, 5), fontsize=7, color="#333333")
    if best:
        ax.plot(*zip(*best, strict=True), color="black", lw=1.2, ls="--",
                label="Pareto set")
        ax.scatter(*zip(*best, strict=True), s=120, facecolors="none", edgecolors="black")
    ax.set_xlabel(f"leakage: {attack} as {threat} (advantage over the naive baseline)")
    ax.set_ylabel("test accuracy" if name == "accuracy" else f"{name} (lower is better)")
    ax.set_xlim(min(-0.05, min(p[0] for p in points) - 0.05), 1.05)
    ax.grid(alpha=0.3)
    ax.set_title(f"Leakage versus {'accuracy' if name == 'accuracy' else name}: "
                 f"{attack} as {threat} (hover over a point for its configuration)",
                 fontsize=9)
    legends_below(fig, [ax], fontsize=7, axes_height=4.1, left=0.1, right=0.97)
    return fig, tooltips


def _tooltip(point: Point, name: str, shared: Mapping[tuple[float, float], list[str]]) -> str:
    adv, value, applies, _ = point
    together = shared[(round(adv, 9), round(value, 9))]
    head = (f"advantage {adv:.3f}" if applies else "not applicable or not measured")
    lines = [f"{head}, {name} {value:.4g}", *together[:12]]
    if len(together) > 12:
        lines.append(f"... and {len(together) - 12} more")
    return "\n".join(lines)


def with_tooltips(svg: bytes, tooltips: Mapping[str, Sequence[str]]) -> bytes:
    """Give each marker of the groups named in ``tooltips`` its text as an SVG ``<title>``
    (the browser shows it on hover), in the order the markers were drawn."""
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
        for (parent, marker), text in zip(markers, texts, strict=False):
            wrapper = ET.Element(f"{{{SVG_NS}}}g", {"class": "point"})
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
