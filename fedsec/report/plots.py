"""Plots for audit reports (matplotlib, rendered to PNG bytes, never shown)."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.report.aggregate import LEAKAGE, pareto_front


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def frontier_points(configs: Sequence[Mapping[str, Any]], attack: str, threat: str
                    ) -> tuple[list[tuple[float, float, bool, Mapping[str, Any]]],
                               list[tuple[float, float]]]:
    """The frontier's points ``(advantage, accuracy, measured, configuration)`` and its Pareto
    set, taken from the measured points only.

    Examples
    --------
    >>> def config(adv, acc, status="ok"):
    ...     return {"accuracy": {"mean": acc}, "attacks": [
    ...         {"attack": "a", "threat": "t", "status": status,
    ...          "metrics": {"advantage": {"mean": adv}}}]}
    >>> points, best = frontier_points([config(1.0, 0.9), config(0.2, 0.8),
    ...                                 config(None, 0.95, "not applicable")], "a", "t")
    >>> [p[2] for p in points], best
    ([True, True, False], [(0.2, 0.8), (1.0, 0.9)])
    """
    points = []
    for config in configs:
        acc = config["accuracy"]["mean"]
        entry = next((a for a in config["attacks"]
                      if a["attack"] == attack and a["threat"] == threat), None)
        if acc is None or entry is None:
            continue
        adv = (entry.get("metrics", {}).get(LEAKAGE, {}).get("mean")
               if entry["status"] == "ok" else None)
        points.append((0.0 if adv is None else adv, acc, adv is not None, config))
    measured = [p for p in points if p[2]]
    front = pareto_front([p[0] for p in measured], [p[1] for p in measured])
    best = sorted((p[0], p[1]) for p, f in zip(measured, front, strict=True) if f)
    return points, best


def frontier_png(configs: Sequence[Mapping[str, Any]], attack: str, threat: str) -> bytes | None:
    """Leakage (attack advantage) against accuracy, one point per configuration, Pareto set marked.

    A configuration in which the attack does not apply, or where its advantage is not
    defined (nothing to gain over the baseline), is drawn apart: at advantage 0 with a hollow
    marker, and never in the Pareto set, which only measured points enter. The axis holds
    negative advantages (an attack worse than its baseline). Configurations that land on the
    same point (hiding one another) are labelled with how many share it ("×3").
    """
    points, best = frontier_points(configs, attack, threat)
    if not points:
        return None
    plt = _figure()
    fig, ax = plt.subplots(figsize=(7.5, 5.0), dpi=110)
    series: dict[str, list[tuple[float, float, bool]]] = defaultdict(list)
    for adv, acc, applies, config in points:
        c = config["config"]
        defence = c["defense"]["name"] if c["defense"] else "no defence"
        series[f"{c['protocol']} / {c['backend']} / {defence}"].append((adv, acc, applies))
    for i, (label, pts) in enumerate(sorted(series.items())):
        color = f"C{i % 10}"
        filled = [(x, y) for x, y, applies in pts if applies]
        hollow = [(x, y) for x, y, applies in pts if not applies]
        if filled:
            ax.scatter(*zip(*filled, strict=True), color=color, s=46, alpha=0.85, label=label)
        if hollow:
            ax.scatter(*zip(*hollow, strict=True), facecolors="none", edgecolors=color, s=46,
                       label=f"{label} (not applicable or not measured)")
    shared: dict[tuple[float, float], int] = defaultdict(int)
    for adv, acc, _, _ in points:
        shared[(round(adv, 9), round(acc, 9))] += 1
    for (x, y), count in shared.items():
        if count > 1:
            ax.annotate(f"×{count}", (x, y), textcoords="offset points", xytext=(6, 5),
                        fontsize=7, color="#333333")
    if best:
        ax.plot(*zip(*best, strict=True), color="black", lw=1.2, ls="--", label="Pareto set")
        ax.scatter(*zip(*best, strict=True), s=120, facecolors="none", edgecolors="black")
    ax.set_xlabel(f"leakage: {attack} as {threat} (advantage over the naive baseline)")
    ax.set_ylabel("test accuracy")
    ax.set_xlim(min(-0.05, min(p[0] for p in points) - 0.05), 1.05)
    ax.grid(alpha=0.3)
    ax.set_title(f"Leakage versus accuracy: {attack} as {threat}", fontsize=10)
    legends_below(fig, [ax], fontsize=7, axes_height=4.1, left=0.1, right=0.97)
    return _png(fig, plt)


def sweep_png(configs: Sequence[Mapping[str, Any]], parameter: str,
              attacks: Sequence[tuple[str, str]], others: Sequence[str] = ()) -> bytes | None:
    """Accuracy and each attack's advantage against one swept protocol parameter.

    One line per protocol, backend, defence, dataset and value of every ``others`` swept
    parameter, so that no line joins points that differ in anything but ``parameter``.
    """
    series: dict[str, list[tuple[float, float | None, dict[str, float]]]] = defaultdict(list)
    for config in configs:
        c = config["config"]
        value = c["params"].get(parameter)
        if not isinstance(value, (int, float)):
            continue
        defence = c["defense"]["name"] if c["defense"] else "no defence"
        advs = {}
        for attack, threat in attacks:
            entry = next((a for a in config["attacks"]
                          if a["attack"] == attack and a["threat"] == threat), None)
            if entry is not None and entry["status"] == "ok":  # skip where it does not apply
                advs[f"{attack} as {threat}"] = (
                    entry.get("metrics", {}).get(LEAKAGE, {}).get("mean") or 0.0)
        label = " / ".join([c["protocol"], *([c["dataset"]] if c.get("dataset") else []),
                            c["backend"], defence])
        fixed = [f"{name}={c['params'][name]}" for name in others
                 if name != parameter and name in c["params"]]
        series[label + (f" ({', '.join(fixed)})" if fixed else "")].append(
            (float(value), config["accuracy"]["mean"], advs))
    if not series:
        return None
    plt = _figure()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    for label, pts in sorted(series.items()):
        pts.sort(key=lambda p: p[0])
        xs = [p[0] for p in pts]
        left.plot(xs, [p[1] for p in pts], marker="o", label=label)
        for name in sorted({k for p in pts for k in p[2]}):
            right.plot(xs, [p[2].get(name, 0.0) for p in pts], marker="o",
                       label=f"{label}: {name}")
    left.set_xlabel(parameter)
    left.set_ylabel("test accuracy")
    right.set_xlabel(parameter)
    right.set_ylabel("attack advantage")
    right.set_ylim(-0.05, 1.05)
    whole = all(float(p[0]).is_integer() for pts in series.values() for p in pts)
    for ax in (left, right):
        ax.grid(alpha=0.3)
        if whole:  # an integer parameter gets integer ticks
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(f"Accuracy and leakage against {parameter}", fontsize=10)
    legends_below(fig, [left, right], fontsize=6, axes_height=3.3, left=0.07, right=0.985,
                  wspace=0.22)
    return _png(fig, plt)


def rounds_png(cells: Sequence[Mapping[str, Any]], attack: str, threat: str) -> bytes | None:
    """Leakage against the round, for attacks that report a per-round curve.

    An attack reports one in its info as ``curve = {"label": ..., "series": {name: [value per
    round]}}`` (or a bare list); the first seed of each configuration is drawn.
    """
    lines: list[tuple[str, list[float]]] = []
    label = ""
    seen: set[str] = set()
    for cell in cells:
        if cell.get("status") != "ok" or cell["configuration"] in seen:
            continue
        for entry in cell["attacks"]:
            curve = entry.get("info", {}).get("curve") if entry["status"] == "ok" else None
            if entry["attack"] != attack or entry["threat"] != threat or not curve:
                continue
            seen.add(cell["configuration"])
            label = curve.get("label", "leakage")
            series = curve.get("series", {})
            series = {"": series} if isinstance(series, list) else series
            for name, values in sorted(series.items()):
                lines.append((f"{cell['configuration']}" + (f": {name}" if name else ""),
                              [float(v) for v in values]))
    if not lines:
        return None
    plt = _figure()
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=110)
    for name, values in lines:
        ax.plot(range(1, len(values) + 1), values, marker=".", label=name)
    ax.set_xlabel("round")
    ax.set_ylabel(label)
    ax.grid(alpha=0.3)
    ax.set_title(f"Leakage against rounds: {attack} as {threat}", fontsize=10)
    legends_below(fig, [ax], fontsize=6, axes_height=3.4, left=0.1, right=0.97)
    return _png(fig, plt)


def legends_below(fig: Any, axes: Sequence[Any], *, fontsize: float, axes_height: float,
                  left: float, right: float, wspace: float = 0.2) -> None:
    """Each axis's legend under it, outside the data, and the figure grown to hold them.

    The axes keep ``axes_height`` inches; below them come the x label and the longest
    legend (one entry per line), above them the title. Nothing is placed on the data.
    """
    import textwrap

    top_in, label_in = 0.45, 0.55
    legends = []
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        if labels:  # long labels wrap rather than run off the figure
            legends.append(ax.legend(handles, [textwrap.fill(t, 64) for t in labels],
                                     fontsize=fontsize, loc="upper left", frameon=False,
                                     bbox_to_anchor=(0.0, -label_in / axes_height)))
    renderer = fig.canvas.get_renderer()  # the legends' own size, measured
    legend_in = max((leg.get_window_extent(renderer).height / fig.dpi for leg in legends),
                    default=0.0) + (0.1 if legends else 0.0)
    height = top_in + axes_height + label_in + legend_in
    fig.set_size_inches(fig.get_size_inches()[0], height)
    fig.subplots_adjust(left=left, right=right, bottom=(label_in + legend_in) / height,
                        top=1 - top_in / height, wspace=wspace)


def _png(fig: Any, plt: Any) -> bytes:
    """Fixed margins set by each plot (a tight layout would triple the rendering time)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", pil_kwargs={"compress_level": 1})
    plt.close(fig)
    return buffer.getvalue()
