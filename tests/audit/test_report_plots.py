"""Plots keep their legends off the data (by matplotlib's own geometry), and an integer
sweep gets integer ticks."""

from __future__ import annotations

from typing import Any

import pytest

from fedsec.report import frontier, sweeps


def config(protocol: str, backend: str, adv: float | None, acc: float,
           **params: Any) -> dict[str, Any]:
    status = "ok" if adv is not None else "not applicable"
    name = " | ".join([protocol, backend, *(f"{k}={v}" for k, v in params.items())])
    return {"accuracy": {"mean": acc}, "configuration": name,
            "config": {"protocol": protocol, "backend": backend, "defense": None,
                       "params": params},
            "attacks": [{"attack": "a", "threat": "server", "status": status,
                         "metrics": {} if adv is None else {"advantage": {"mean": adv}}}]}


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    kept: list[Any] = []
    monkeypatch.setattr(sweeps, "_png", lambda fig, plt: kept.append(fig) or b"png")
    return kept


def draw_frontier(configs: list[dict[str, Any]], figures: list[Any]) -> None:
    drawn = frontier.frontier_figure(configs, "a", "server")
    assert drawn is not None
    figures.append(drawn[0])


def many() -> list[dict[str, Any]]:
    out = []
    for i, protocol in enumerate(["fedcg-naive", "fedcg-secure", "fdskl", "nri-dc"]):
        for j, backend in enumerate(["plain", "noise", "paillier"]):
            for m in (3, 5, 10):
                out.append(config(protocol, backend, None if i == 3 else 0.1 * (i + j),
                                  0.5 + 0.01 * m, n_landmarks=m))
    return out


def test_no_legend_covers_an_axis(figures: list[Any]) -> None:
    draw_frontier(many(), figures)
    sweeps.sweep_png(many(), "n_landmarks", [("a", "server")])
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
    sweeps.sweep_png(many(), "n_landmarks", [("a", "server")])
    fig = figures[0]
    fig.canvas.draw()
    for ax in fig.axes:
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks)


def test_a_second_swept_parameter_splits_the_lines_so_none_zig_zags(figures: list[Any]) -> None:
    grid = [config("fedgraph", "plain", 0.1 * r, 0.7, cluster_size=s, redraws=r)
            for s in (5, 10, 20) for r in (1, 6, 11)]
    sweeps.sweep_png(grid, "redraws", [("a", "server")], others=["cluster_size", "redraws"])
    left = figures[0].axes[0]
    assert len(left.lines) == 3  # one per cluster size
    for line in left.lines:
        xs = list(line.get_xdata())
        assert xs == sorted(set(xs))  # each x once, in order: no zig-zag
    labels = left.get_legend_handles_labels()[1]
    assert any("cluster_size=10" in label for label in labels)


def test_long_labels_wrap_inside_the_figure(figures: list[Any]) -> None:
    grid = [config("a-protocol-with-a-rather-long-name", "plain", 0.1, 0.7,
                   a_long_parameter_name=s, m=r) for s in (5, 10) for r in (1, 2)]
    long_attack = ("an-attack-with-parameters[sources=clusters,steps=300]",
                   "server,party1,party2")
    for entry in grid:
        entry["attacks"][0].update(attack=long_attack[0], threat=long_attack[1])
    sweeps.sweep_png(grid, "m", [long_attack], others=["a_long_parameter_name", "m"])
    fig = figures[0]
    fig.canvas.draw()
    width = fig.get_size_inches()[0] * fig.dpi
    for ax in fig.axes:
        assert ax.get_legend().get_window_extent().x1 <= width


def test_configurations_on_one_point_say_how_many_share_it(figures: list[Any]) -> None:
    same = [config(p, "plain", 0.4, 0.8) for p in ("x", "y", "z")] + [
        config("w", "plain", 0.9, 0.6)]
    draw_frontier(same, figures)
    texts = [t.get_text() for t in figures[0].axes[0].texts]
    assert texts == ["×3"]


def test_every_frontier_point_names_its_configurations_on_hover() -> None:
    import xml.etree.ElementTree as ET

    same = [config(p, "plain", 0.4, 0.8) for p in ("x", "y", "z")] + [
        config("w", "plain", 0.9, 0.6), config("v", "plain", None, 0.7)]
    svg = frontier.frontier_svg(same, "a", "server")
    assert svg is not None
    root = ET.fromstring(svg)  # noqa: S314 (drawn by the test)
    titles = [t.text or "" for t in root.iter(f"{{{frontier.SVG_NS}}}title")]
    assert len(titles) == 5  # one per point, each hidden point included
    assert sum("x | plain" in t and "z | plain" in t for t in titles) == 3  # they share one
    assert any(t.startswith("not applicable") and "v | plain" in t for t in titles)


def test_a_defence_plot_shows_its_cost_beside_its_effect(figures: list[Any]) -> None:
    grid = [config("secure-sum", "plain", 1.0, None)]
    grid[0]["metrics"] = {"sum_relative_error": {"mean": 0.0}}
    for sigma, adv, error in ((0.01, 0.97, 0.001), (1.0, -0.7, 0.03), (10.0, -1.5, 0.3)):
        entry = config("secure-sum", "plain", adv, None)
        entry["config"]["defense"] = {"name": "gaussian-noise", "params": {"sigma": sigma}}
        entry["metrics"] = {"sum_relative_error": {"mean": error}}
        grid.append(entry)
    assert sweeps.defended_parameters(grid) == [("gaussian-noise", "sigma")]
    sweeps.defence_png(grid, "gaussian-noise", "sigma", [("a", "server")])
    left, right = figures[0].axes
    assert left.get_ylabel() == "sum_relative_error (the cost)"
    assert left.get_xscale() == "log"  # sigma spans three decades
    assert list(left.lines[0].get_ydata()) == [0.001, 0.03, 0.3]
    assert right.get_ylim()[0] < -1.5  # negative advantages stay on the axis
    assert any("without the defence" in label for label in right.get_legend_handles_labels()[1])


def test_report_metric_is_the_plotted_one(figures: list[Any]) -> None:
    grid = many()
    for entry in grid:
        if entry["attacks"][0]["status"] == "ok":
            entry["attacks"][0]["metrics"]["distance_error"] = {"mean": 0.25}
    sweeps.sweep_png(grid, "n_landmarks", [("a", "server")], metric="distance_error")
    right = figures[0].axes[1]
    assert right.get_ylabel() == "distance_error"
    assert {y for line in right.lines for y in line.get_ydata()} == {0.25}
