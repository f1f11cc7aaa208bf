"""Plots keep their legends off the data (by matplotlib's own geometry), and an integer
sweep gets integer ticks."""

from __future__ import annotations

from typing import Any

import pytest

from fedsec.report import plots


def config(protocol: str, backend: str, adv: float | None, acc: float,
           **params: Any) -> dict[str, Any]:
    status = "ok" if adv is not None else "not applicable"
    return {"accuracy": {"mean": acc},
            "config": {"protocol": protocol, "backend": backend, "defense": None,
                       "params": params},
            "attacks": [{"attack": "a", "threat": "server", "status": status,
                         "metrics": {} if adv is None else {"advantage": {"mean": adv}}}]}


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    kept: list[Any] = []
    monkeypatch.setattr(plots, "_png", lambda fig, plt: kept.append(fig) or b"png")
    return kept


def many() -> list[dict[str, Any]]:
    out = []
    for i, protocol in enumerate(["fedcg-naive", "fedcg-secure", "fdskl", "nri-dc"]):
        for j, backend in enumerate(["plain", "noise", "paillier"]):
            for m in (3, 5, 10):
                out.append(config(protocol, backend, None if i == 3 else 0.1 * (i + j),
                                  0.5 + 0.01 * m, n_landmarks=m))
    return out


def test_no_legend_covers_an_axis(figures: list[Any]) -> None:
    plots.frontier_png(many(), "a", "server")
    plots.sweep_png(many(), "n_landmarks", [("a", "server")])
    assert len(figures) == 2
    for fig in figures:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            legend = ax.get_legend()
            assert legend is not None
            box = legend.get_window_extent(renderer)
            assert not box.overlaps(ax.get_window_extent(renderer))
            assert box.y0 >= 0  # inside the figure


def test_an_integer_sweep_gets_integer_ticks(figures: list[Any]) -> None:
    plots.sweep_png(many(), "n_landmarks", [("a", "server")])
    fig = figures[0]
    fig.canvas.draw()
    for ax in fig.axes:
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks)
