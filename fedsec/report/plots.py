"""Plots for audit reports (matplotlib, rendered to PNG or SVG bytes, never shown): the shared
figure set-up (one colour per configuration across the report, titles wrapped to fit, legends
below the data) and the per-round leakage plot; the frontier and the sweeps have their
modules."""

from __future__ import annotations

import io
import textwrap
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

#: Markers that tell apart lines of one colour (one configuration family, several settings).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def family(config: Mapping[str, Any]) -> str:
    """A configuration's family, the unit of colour in a report: protocol, dataset, backend
    and defence (without its settings, and without the protocol's parameters).

    Examples
    --------
    >>> family({"protocol": "fedcg-naive", "backend": "plain", "defense": None, "params": {}})
    'fedcg-naive / plain / no defence'
    """
    defence = config.get("defense")
    return " / ".join([config["protocol"], *([config["dataset"]] if config.get("dataset")
                                             else []),
                       config["backend"], defence["name"] if defence else "no defence"])


def palette(configs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """One colour per configuration family of the whole report (``configs`` are the report's
    configurations or cells): every plot given the same list colours a family alike.

    Examples
    --------
    >>> configs = [{"config": {"protocol": p, "backend": "plain", "defense": None}}
    ...            for p in ("b", "a")]
    >>> palette(configs)
    {'a / plain / no defence': 'C0', 'b / plain / no defence': 'C1'}
    """
    families = sorted({family(c["config"]) for c in configs})
    return {name: f"C{i % 10}" for i, name in enumerate(families)}


def shade(colour: str, index: int, count: int) -> tuple[float, float, float]:
    """The ``index``-th of ``count`` shades of a family's colour (the first is the colour
    itself, the others darker or lighter by turns), for lines of one family."""
    from matplotlib.colors import to_rgb

    rgb = to_rgb(colour)
    if count <= 1 or index == 0:
        return rgb
    step = 0.5 * ((index + 1) // 2) / ((count + 1) // 2)
    target = 0.0 if index % 2 else 1.0
    return (rgb[0] + (target - rgb[0]) * step, rgb[1] + (target - rgb[1]) * step,
            rgb[2] + (target - rgb[2]) * step)


def line_styles(labels: Sequence[str], families: Mapping[str, str],
                colours: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Colour and marker of each line: its family's colour, shaded, and a marker of its own
    among the lines of its family (``families`` maps a line's label to its family)."""
    members: dict[str, list[str]] = defaultdict(list)
    for label in sorted(labels):
        members[families[label]].append(label)
    out = {}
    for name, lines in members.items():
        colour = colours.get(name, "C0")
        for i, label in enumerate(lines):
            out[label] = {"color": shade(colour, i, len(lines)),
                          "marker": MARKERS[i % len(MARKERS)] if len(lines) > 1 else "o"}
    return out


def wrapped(text: str, width_in: float, fontsize: float) -> str:
    """A title wrapped to a figure ``width_in`` inches wide at ``fontsize`` points."""
    chars = max(30, int(width_in * 72 / (fontsize * 0.62)))
    return "\n".join(textwrap.wrap(text, chars))


def title_height(title: str, fontsize: float) -> float:
    """Inches above the axes that a (wrapped) title needs."""
    return 0.2 + (title.count("\n") + 1) * fontsize * 1.35 / 72


def integer_ticks(*axes: Any) -> None:
    """Integer ticks on the x axes (a count such as rounds or landmarks is never 2.5)."""
    from matplotlib.ticker import MaxNLocator

    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def rounds_png(cells: Sequence[Mapping[str, Any]], attack: str, threat: str) -> bytes | None:
    """Leakage against the round, for attacks that report a per-round curve.

    An attack reports one in its info as ``curve = {"label": ..., "series": {name: [value per
    round]}}`` (or a bare list); the first seed of each configuration is drawn.
    """
    lines: list[tuple[str, list[float]]] = []
    families: dict[str, str] = {}
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
                line = f"{cell['configuration']}" + (f": {name}" if name else "")
                lines.append((line, [float(v) for v in values]))
                families[line] = family(cell["config"])
    if not lines:
        return None
    plt = _figure()
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=110)
    styles = line_styles([name for name, _ in lines], families, palette(cells))
    for name, values in lines:
        ax.plot(range(1, len(values) + 1), values, markersize=3, label=name, **styles[name])
    ax.set_xlabel("round")
    integer_ticks(ax)
    ax.set_ylabel(label)
    ax.grid(alpha=0.3)
    title = wrapped(f"Leakage against rounds: {attack} as {threat}", 7.5, 10)
    ax.set_title(title, fontsize=10)
    legends_below(fig, [ax], fontsize=6, axes_height=3.4, left=0.1, right=0.97,
                  top_in=title_height(title, 10))
    return _png(fig, plt)


def legends_below(fig: Any, axes: Sequence[Any], *, fontsize: float, axes_height: float,
                  left: float, right: float, wspace: float = 0.2,
                  top_in: float = 0.45) -> None:
    """Each axis's legend under it, outside the data, and the figure grown to hold them.

    The axes keep ``axes_height`` inches; below them come the x label and the longest
    legend (one entry per line), above them the title (``top_in`` inches). Nothing is placed
    on the data.
    """
    label_in = 0.55
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
