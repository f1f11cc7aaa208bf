"""The summaries tests/benchmarks/fdskl_figures.py prints: box plot, growth exponent, time to
reach an error."""

from __future__ import annotations

import math

import numpy as np
import pytest


@pytest.fixture
def figures(benchmark_script):
    """The benchmark script."""
    return benchmark_script("fdskl_figures")


def test_box_summary_matches_numpy_quartiles_and_mean(figures) -> None:
    values = [7.0, 1.0, 3.0, 2.0, 10.0, 4.0]
    box = figures.box_summary(values)
    assert box["min"] == 1.0
    assert box["max"] == 10.0
    assert box["median"] == 3.5
    assert box["q1"] == pytest.approx(2.25)  # linear interpolation between 2 and 3
    assert box["q3"] == pytest.approx(6.25)  # between 4 and 7
    assert box["mean"] == pytest.approx(27.0 / 6)


def test_box_summary_of_one_value_is_that_value_everywhere(figures) -> None:
    assert set(figures.box_summary([0.25]).values()) == {0.25}


def test_box_summary_refuses_no_values(figures) -> None:
    with pytest.raises(ValueError, match="at least one"):
        figures.box_summary([])


def test_box_text_places_whiskers_box_median_and_mean(figures) -> None:
    box = {"min": 0.0, "q1": 2.0, "median": 3.0, "q3": 4.0, "max": 10.0, "mean": 5.0}
    line = figures.box_text(box, 0.0, 10.0, width=11)
    assert line == "--=|=*-----"
    assert len(figures.box_text(box, -10.0, 20.0, width=31)) == 31
    assert figures.box_text(box, -10.0, 20.0, width=31).startswith("          -")


def test_loglog_slope_recovers_the_exponent_of_a_power_law(figures) -> None:
    sizes = np.array([2500, 5000, 10000, 20000])
    assert figures.loglog_slope(sizes, 0.3 * sizes**1.5) == pytest.approx(1.5)
    assert figures.loglog_slope(sizes, np.full(4, 2.0)) == pytest.approx(0.0, abs=1e-12)


def test_loglog_slope_is_the_least_squares_fit_of_noisy_times(figures) -> None:
    sizes, seconds = [1.0, 2.0, 4.0], [1.0, 4.0, 8.0]  # log2: 0, 2, 3 at 0, 1, 2
    assert figures.loglog_slope(sizes, seconds) == pytest.approx(1.5)


def test_loglog_slope_refuses_a_single_size(figures) -> None:
    with pytest.raises(ValueError, match="two distinct sizes"):
        figures.loglog_slope([100, 100], [1.0, 2.0])


def test_time_to_reach_takes_the_earliest_time_at_or_below_the_target(figures) -> None:
    curve = [(0.5, 0.40), (3.0, 0.09), (1.0, 0.10), (2.0, 0.20)]
    assert figures.time_to_reach(curve, 0.10) == 1.0
    assert figures.time_to_reach(curve, 0.40) == 0.5
    assert math.isinf(figures.time_to_reach(curve, 0.05))


def test_parse_sets_types_ints_floats_and_text(figures) -> None:
    params = figures.parse_sets(["n_iterations=24000", "step=5e-1", "loss=smooth-hinge"])
    assert params == {"n_iterations": 24000, "step": 0.5, "loss": "smooth-hinge"}
    assert isinstance(params["n_iterations"], int)
    with pytest.raises(ValueError, match="KEY=VALUE"):
        figures.parse_sets(["n_iterations"])
