"""Reconstructions drawn next to the records they reconstruct, when a scenario asks.

Cells keep a few reconstructed rows only for ``[[attacks]]`` entries with ``show = N``
(:mod:`fedsec.audit.examples`); :func:`examples_plots` draws the first seed's rows of each
configuration, attack and threat model: the true rows above, the reconstructions below. Rows
placed on an image grid are drawn as images (pixels the target does not hold in a flat
colour); other rows as one strip of values each.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fedsec.report.plots import _figure, _png


def examples_plots(cells: Sequence[Mapping[str, Any]]
                   ) -> dict[tuple[str, str, str], bytes]:
    """One PNG per (attack, threat model, configuration) whose cell kept examples."""
    out: dict[tuple[str, str, str], bytes] = {}
    for cell in sorted(cells, key=lambda c: (c.get("configuration", ""),
                                             c.get("config", {}).get("seed", 0))):
        if cell.get("status") != "ok":
            continue
        for entry in cell.get("attacks", []):
            shown = entry.get("examples")
            if not shown:
                continue
            key = (entry["attack"], entry["threat"], cell["configuration"])
            if key not in out:  # the first seed's rows
                title = (f"{entry['attack']} as {entry['threat']}, "
                         f"{cell['configuration']} (seed {cell['config']['seed']}): "
                         f"{shown['target']}")
                out[key] = examples_png(shown, title)
    return out


def examples_png(shown: Mapping[str, Any], title: str) -> bytes:
    """The true rows (top) and their reconstructions (bottom), one column per row."""
    truth = np.asarray(shown["truth"], dtype=float)
    estimate = np.asarray(shown["estimate"], dtype=float)
    grid = shown.get("grid")
    low, high = float(np.min(truth)), float(np.max(truth))
    plt = _figure()
    n = len(truth)
    fig, axes = plt.subplots(2, n, figsize=(1.6 * n + 0.6, 3.8), dpi=110, squeeze=False)
    cmap = plt.get_cmap("gray").with_extremes(bad="#9ec5e8")  # pixels the target lacks
    for row, (label, values) in enumerate((("true", truth), ("reconstructed", estimate))):
        for i in range(n):
            ax = axes[row][i]
            ax.imshow(_picture(values[i], grid), cmap=cmap, vmin=low, vmax=high,
                      aspect="equal" if grid else "auto", interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_ylabel(label, fontsize=8)
    width = 1.6 * n + 0.6
    lines = textwrap.wrap(title, width=max(30, int(width * 14)))
    fig.set_size_inches(width, 3.5 + 0.16 * len(lines))
    fig.suptitle("\n".join(lines), fontsize=8)
    fig.subplots_adjust(left=0.6 / width, right=0.99, bottom=0.03,
                        top=1 - (0.25 + 0.16 * len(lines)) / (3.5 + 0.16 * len(lines)),
                        wspace=0.08, hspace=0.08)
    return _png(fig, plt)


def _picture(values: np.ndarray, grid: Mapping[str, Any] | None) -> np.ndarray:
    """A row as an image on its grid (NaN where the target holds no pixel), or a strip."""
    if not grid:
        return values[None, :]
    side = int(grid["side"])
    image = np.full(side * side, np.nan)
    image[np.asarray(grid["positions"], dtype=int)] = values
    return image.reshape(side, side)

