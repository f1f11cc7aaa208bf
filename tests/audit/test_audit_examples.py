"""Reconstructed records stay out of an audit's files unless the scenario asks (``show``),
and then the report draws them: pixels on their image grid, true rows above."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from fedsec.audit import load_spec, run_audit
from fedsec.audit.spec import AuditSpecError
from fedsec.report import build_report

pytest.importorskip("torch")

SCENARIO = """
[audit]
name = "shown"
description = "FedGraph, tiny, inverted by the server with party1's extractor"
protocols = ["fedgraph"]
dataset = "fashion_mnist_1k"
partition = "random:parties=2,features=0.1"

[params]
hidden = 32
layers = 1
epochs = 2
gcn_epochs = 1
compare = false
depth = 1

[[attacks]]
name = "embedding-inversion"
as = ["server,party1"]
params = {{ steps = 20, max_rows = 10, sources = "test" }}
{show}
"""


def audit(tmp_path: Path, show: str) -> tuple[dict, str]:
    spec = tmp_path / "shown.toml"
    spec.write_text(textwrap.dedent(SCENARIO.format(show=show)), encoding="utf-8")
    out = tmp_path / "out"
    run_audit(load_spec(spec), out)
    build_report(out)
    cell = json.loads(next((out / "cells").glob("*.json")).read_text(encoding="utf-8"))
    return cell, (out / "report.html").read_text(encoding="utf-8")


def test_nothing_reconstructed_is_kept_by_default(tmp_path: Path) -> None:
    cell, html = audit(tmp_path, "")
    assert cell["status"] == "ok" and "examples" not in cell["attacks"][0]
    assert "Reconstructions (kept" not in html and "never stored" in html


def test_show_keeps_that_many_rows_on_the_image_grid_and_the_report_draws_them(
        tmp_path: Path) -> None:
    cell, html = audit(tmp_path, "show = 3")
    shown = cell["attacks"][0]["examples"]
    assert shown["target"] == "party/party1/value/inputs/test"
    assert len(shown["estimate"]) == len(shown["truth"]) == 3
    grid = shown["grid"]  # party1's 78 pixels placed on the 28 x 28 image
    assert grid["side"] == 28 and len(grid["positions"]) == len(shown["truth"][0]) == 78
    assert "Reconstructions (kept at the scenario" in html
    assert len(list((tmp_path / "out" / "plots").glob("examples_*.png"))) == 1


@pytest.mark.parametrize("show", ["show = 99", "show = -1", "show = 2.5", "show = true"])
def test_show_must_be_a_small_whole_number(tmp_path: Path, show: str) -> None:
    spec = tmp_path / "bad.toml"
    spec.write_text(textwrap.dedent(SCENARIO.format(show=show)), encoding="utf-8")
    with pytest.raises(AuditSpecError, match=r"show = .* must be a whole number"):
        load_spec(spec)


def test_asking_for_rows_changes_the_cells_ids_and_not_asking_keeps_them(tmp_path: Path
                                                                         ) -> None:
    ids = {}
    for label, show in (("none", ""), ("shown", "show = 2")):
        spec = tmp_path / f"{label}.toml"
        spec.write_text(textwrap.dedent(SCENARIO.format(show=show)), encoding="utf-8")
        ids[label] = [cell.id for cell in load_spec(spec).cells()]
    assert ids["none"] != ids["shown"]  # a finished cell without rows is not reused
