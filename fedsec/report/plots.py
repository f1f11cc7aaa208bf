"""Plots for audit reports (matplotlib, rendered to PNG or SVG bytes, never shown): the shared
figure set-up and the per-round leakage plot; the frontier and the sweeps have their modules."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


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
