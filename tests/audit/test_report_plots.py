"""Plots keep their legends off the data (by matplotlib's own geometry), an integer sweep (or
rounds) gets integer ticks, titles fit their figure, a configuration family has one colour in
every plot, and results without an advantage to draw (not applicable, inconclusive) sit in a
strip of their own, never at advantage 0."""

from __future__ import annotations

from typing import Any

import pytest

from fedsec.report import frontier, plots, sweeps


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
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
        assert legends and fig.axes[0].get_legend() is not None
        for legend in legends:
            box = legend.get_window_extent(renderer)
            assert box.y0 >= 0  # inside the figure
            for ax in fig.axes:  # the frontier's strip included
                assert not box.overlaps(ax.get_window_extent(renderer))


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


def unsure(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry as an attack that stayed at its baseline without converging."""
    entry["attacks"][0].update(targets=["party/p1/shard/cell0/X"], converged=False)
    entry["attacks"][0]["metrics"] = {"advantage": {"mean": 0.01}}
    return entry


def test_results_without_an_advantage_sit_in_their_own_strip_never_at_zero(
        figures: list[Any]) -> None:
    grid = [config("naive", "plain", 0.9, 0.8), config("naive", "noise", 0.0, 0.7),
            config("secure", "plain", None, 0.75), unsure(config("secure", "noise", 0.3, 0.6))]
    draw_frontier(grid, figures)
    ax, strip = figures[0].axes
    drawn = sorted((float(x), float(y)) for c in ax.collections
                   if str(c.get_gid()).startswith("points-") for x, y in c.get_offsets())
    assert drawn == [(0.0, 0.7), (0.9, 0.8)]  # only the measured ones on the axis
    in_strip = sorted((float(x), float(y)) for c in strip.collections
                      for x, y in c.get_offsets())
    assert in_strip == [(0.0, 0.75), (1.0, 0.6)]  # not applicable, then inconclusive
    assert [t.get_text() for t in strip.get_xticklabels()] == ["not\napplicable",
                                                                "incon-\nclusive"]
    points, best, _ = frontier.frontier_points(grid, "a", "server")
    assert [p.state for p in points] == ["measured", "measured", "not applicable",
                                         "inconclusive"]
    assert best == [(0.0, 0.7), (0.9, 0.8)]  # the inconclusive 0.6 point is no trade-off


def test_a_frontier_without_such_results_has_no_strip(figures: list[Any]) -> None:
    draw_frontier([config("naive", "plain", 0.9, 0.8), config("naive", "noise", 0.1, 0.7)],
                  figures)
    assert len(figures[0].axes) == 1


def test_the_pareto_set_compares_values_as_printed() -> None:
    grid = [config("naive", "plain", 0.99999999993, 0.53, m=2),
            config("naive", "plain", 0.99999999996, 0.92, m=10),
            config("secure", "plain", 0.3, 0.4, m=10),
            config("secure", "noise", 0.3 + 1e-15, 0.4 + 7.6e-8, m=10)]
    _, best, _ = frontier.frontier_points(grid, "a", "server")
    # 1.00 at 0.53 is dominated by 1.00 at 0.92; the two secure points print alike, so
    # neither dominates the other (compared as exact floats, one would drop out)
    assert best == [(0.3, 0.4), (0.3 + 1e-15, 0.4 + 7.6e-8), (0.99999999996, 0.92)]


def colours_by_family(fig: Any) -> dict[str, tuple[float, float, float]]:
    """The colour each legend entry of a figure's first axes shows, by its label."""
    from matplotlib.colors import to_rgb

    out = {}
    handles, labels = fig.axes[0].get_legend_handles_labels()
    for handle, label in zip(handles, labels, strict=True):
        if hasattr(handle, "get_color"):
            out[label] = to_rgb(handle.get_color())
        elif len(handle.get_facecolor()):  # hollow markers explain the strip: no family
            out[label] = to_rgb(handle.get_facecolor()[0])
    return out


def test_a_configuration_family_has_one_colour_in_every_plot(figures: list[Any]) -> None:
    grid = many()
    draw_frontier(grid, figures)
    sweeps.sweep_png(grid, "n_landmarks", [("a", "server")])
    only_some = [c for c in grid if c["config"]["protocol"] != "fedcg-naive"]
    frontier_colours, sweep_colours = (colours_by_family(f) for f in figures)
    shared = set(frontier_colours) & set(sweep_colours)
    assert len(shared) == 12
    assert all(frontier_colours[name] == sweep_colours[name] for name in shared)
    assert len(set(frontier_colours.values())) >= 10  # families told apart
    # each plot takes its colours from the list it is given: the whole report's, in a report
    assert plots.palette(grid)["fedcg-secure / plain / no defence"] != \
        plots.palette(only_some)["fedcg-secure / plain / no defence"]


def test_rounds_get_integer_ticks_and_titles_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    kept: list[Any] = []
    monkeypatch.setattr(plots, "_png", lambda fig, plt: kept.append(fig) or b"png")
    long_attack = "embedding-inversion[sources=test,steps=300,starts=zero+prior]"
    cell = {"status": "ok", "configuration": "fedgraph | plain | no defence | depth=3",
            "config": {"protocol": "fedgraph", "backend": "plain", "defense": None,
                       "params": {"depth": 3}},
            "attacks": [{"attack": long_attack, "threat": "server,party1,party2",
                         "status": "ok", "info": {"curve": {"label": "rank",
                                                            "series": [1.0, 2.0, 3.0]}}}]}
    plots.rounds_png([cell], long_attack, "server,party1,party2")
    grid = many()
    for entry in grid:
        entry["attacks"][0].update(attack=long_attack, threat="server,party1,party2")
    drawn = frontier.frontier_figure(grid, long_attack, "server,party1,party2")
    assert drawn is not None
    for fig in (kept[0], drawn[0]):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        width, height = fig.get_size_inches() * fig.dpi
        titles = [fig._suptitle] if fig._suptitle is not None else []
        titles += [ax.title for ax in fig.axes if ax.get_title()]
        assert titles
        for title in titles:
            box = title.get_window_extent(renderer)
            assert 0 <= box.x0 and box.x1 <= width and box.y1 <= height  # nothing cut off
            for ax in fig.axes:
                assert not box.overlaps(ax.get_window_extent(renderer))
    ax = kept[0].axes[0]
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)


def test_each_defence_setting_gets_its_own_line(figures: list[Any]) -> None:
    grid = []
    for method, accuracies in (("U", (0.84, 0.92, 0.92)), ("N", (0.89, 0.95, 0.92))):
        for m, acc in zip((5, 10, 20), accuracies, strict=True):
            entry = config("fedcg-naive", "plain", 0.9, acc, n_landmarks=m)
            entry["config"]["defense"] = {"name": "random-landmarks",
                                          "params": {"method": method}}
            grid.append(entry)
    sweeps.sweep_png(grid, "n_landmarks", [("a", "server")])
    left = figures[0].axes[0]
    assert len(left.lines) == 2  # U and N apart: no line zig-zags between them
    assert [list(line.get_ydata()) for line in left.lines] == [[0.89, 0.95, 0.92],
                                                               [0.84, 0.92, 0.92]]
    colours = {line.get_color() for line in left.lines}
    assert len(colours) == 2 and len({line.get_marker() for line in left.lines}) == 2
