"""The box-plot benchmark's pure parts: statistics, the paper's tables, the time order, the SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest


@pytest.fixture
def boxplots(benchmark_script) -> ModuleType:
    """The benchmark script."""
    return benchmark_script("nri_dc_boxplots")


def test_box_statistics_of_a_known_array(boxplots: ModuleType) -> None:
    values = [7.0, 1.0, 3.0, 10.0, 2.0, 5.0, 4.0, 6.0]  # unsorted, even count
    s = boxplots.box_statistics(values)
    assert s == pytest.approx({"min": 1.0, "q1": 2.75, "median": 4.5, "q3": 6.25, "max": 10.0,
                               "mean": 4.75, "std": float(np.std(values))})


def test_paper_tables_are_ordered_statistics_beside_every_method(boxplots: ModuleType) -> None:
    for model in ("logistic", "mlp", "random-forest"):
        paper = boxplots.paper_statistics(model)
        assert set(paper) == {"central", "local", *boxplots.METHODS}
        for row in paper.values():
            assert row["min"] <= row["q1"] <= row["median"] <= row["q3"] <= row["max"]
            assert row["min"] <= row["mean"] <= row["max"]
    assert boxplots.paper_statistics("logistic")["gep (paper)"]["mean"] == 0.5
    assert boxplots.paper_statistics("mlp")["ls"]["median"] == 0.820


def test_methods_are_ordered_by_mean_time(boxplots: ModuleType) -> None:
    seconds = {"rdp": [0.5, 0.7], "gep": [0.01, 0.05], "opp": [0.02, 0.02]}
    assert boxplots.by_mean_time(seconds) == ["opp", "gep", "rdp"]


def test_the_svg_is_written_parseable_and_names_every_method(boxplots: ModuleType,
                                                             tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    values = {name: rng.uniform(0.6, 0.9, 20) for name in ("central", "local", "opp")}
    path = tmp_path / "box.svg"
    path.write_bytes(boxplots.boxplot_svg(values, "test title"))
    root = ET.parse(path).getroot()  # noqa: S314 (drawn by the test)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = " ".join("".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text"))
    for name in ("central", "local", "opp", "test title"):
        assert name in text
