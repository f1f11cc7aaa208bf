"""Progress: the bar and line texts, terminal or log, and what runs, audits and attacks report."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fedsec.audit import load_spec, run_audit
from fedsec.cli.progress import Display, render_bar, render_line, seconds_text, time_left
from fedsec.errors import ValidationError
from fedsec.progress import Progress
from fedsec.runner import RunConfig, run

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]
FEDCG = ["run", "fedcg-secure", "--dataset", "iris", "--out"]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_shows_the_count_the_share_and_the_time_left() -> None:
    update = Progress("audit", 6, 10, "cell", resumed=2)
    assert render_bar(update, 8.0, width=10) == \
        "audit [######----] 6/10 cells (60%) 8 s elapsed, about 8 s left"
    assert render_line(update, 8.0) == "audit: cell 6 of 10 (8 s elapsed, about 8 s left)"
    assert time_left(update, 8.0) == 8.0  # 4 fresh cells in 8 s, 4 to go
    assert time_left(Progress("audit", 10, 10, "cell"), 8.0) is None
    assert render_line(Progress("x", 10, 10, "step"), 125.0) == \
        "x: step 10 of 10 (done in 2 min 5 s)"
    assert seconds_text(3 * 3600 + 59) == "3 h 0 min"


def test_progress_refuses_impossible_counts() -> None:
    with pytest.raises(ValidationError, match="resumed <= done"):
        Progress("audit", 1, 10, "cell", resumed=2)


def test_a_terminal_gets_one_bar_redrawn_in_place() -> None:
    clock, stream = Clock(), Terminal()
    display = Display(stream, clock=clock)
    assert display.tty
    for epoch in range(1, 5):
        clock.now += 1.0
        display.update(Progress("fedcg-secure CG", epoch, 4, "epoch"))
    text = stream.getvalue()
    assert text.count("\r") == 4 and text.endswith("\n")
    assert text.rstrip().endswith("4/4 epochs (100%) done in 3 s")
    assert "\n" not in text[:-1]  # one line, redrawn


def test_a_log_gets_the_first_the_last_and_occasional_lines() -> None:
    clock, stream = Clock(), io.StringIO()
    display = Display(stream, clock=clock, every=5.0)
    assert not display.tty
    for epoch in range(1, 21):
        clock.now += 1.0
        display.update(Progress("fedcg-secure CG", epoch, 20, "epoch"))
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0] == "fedsec: fedcg-secure CG: epoch 1 of 20 (0 s elapsed)"
    assert lines[-1] == "fedsec: fedcg-secure CG: epoch 20 of 20 (done in 19 s)"
    assert len(lines) == 5  # epochs 1, 6, 11, 16 and the last


def test_a_message_on_a_terminal_goes_above_the_bar() -> None:
    clock, stream = Clock(), Terminal()
    display = Display(stream, clock=clock)
    display.update(Progress("audit", 1, 3, "cell"))
    display.message("computing the centralized reference")
    display.close()
    text = stream.getvalue()  # the bar is blanked, the message written, the bar redrawn
    assert "\rfedsec: computing the centralized reference\n\raudit [" in text
    assert text.endswith("\n")


def test_progress_changes_neither_the_transcript_nor_the_result() -> None:
    config = RunConfig(protocol="fedcg-naive", dataset="iris", seed=2, secret_seed=2)
    updates: list[Progress] = []
    quiet, followed = run(config), run(config, on_progress=updates.append)
    assert quiet.transcript.footer["head"] == followed.transcript.footer["head"]
    assert quiet.record.federated_metrics == followed.record.federated_metrics
    epochs = quiet.record.federated_metrics["epochs"]
    assert [u.done for u in updates] == [*range(1, epochs + 1), epochs]
    assert updates[-1].final and updates[0].label == "fedcg-naive CG"


def test_an_attack_reports_its_iterations_to_the_hook_it_is_given() -> None:
    from fedsec.registry import create
    from fedsec.views import build_view

    result = run(RunConfig(protocol="fedcg-naive", dataset="iris", seed=2))
    attack = create("attack", "edm-completion", {"max_iter": 5})
    updates: list[Progress] = []
    attack.progress_hook = updates.append
    attack.run(build_view(result.transcript, "server", result.private))
    assert updates and updates[-1].final
    assert {u.total for u in updates} == {5} and updates[0].label.startswith("edm-completion")


def test_a_resumed_audit_counts_the_cells_already_done(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(textwrap.dedent("""
        [audit]
        name = "tiny"
        protocols = ["secure-sum"]
        dataset = "iris"
        seeds = [0, 1, 2]

        [[attacks]]
        name = "contribution-readout"
        as = ["aggregator"]
        """))
    spec = load_spec(path)
    run_audit(spec, tmp_path / "out")
    cells = sorted((tmp_path / "out" / "cells").iterdir())
    cells[0].unlink()
    updates: list[Progress] = []
    run_audit(spec, tmp_path / "out", on_progress=updates.append)
    assert [(u.done, u.total, u.resumed) for u in updates] == [(2, 3, 2), (3, 3, 2)]
    assert "seed" in updates[-1].note and not updates[0].note


def test_fedsec_run_prints_epoch_lines_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    proc = subprocess.run([*FEDSEC, *FEDCG, str(tmp_path / "a")], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "fedcg-secure CG: epoch" in ln]
    assert lines and lines[0].startswith("fedsec: fedcg-secure CG: epoch 1 of 500")
    assert "done in" in lines[-1] and "\r" not in proc.stderr
    json_run = subprocess.run([*FEDSEC, *FEDCG, str(tmp_path / "b"), "--json"],
                              capture_output=True, text=True, timeout=300, check=False)
    assert json_run.returncode == 0 and json_run.stderr == ""
    assert json_run.stdout.lstrip().startswith("{")


def test_fedsec_run_redraws_a_bar_when_stderr_is_a_terminal(tmp_path: Path) -> None:
    main, child = pty.openpty()
    try:
        proc = subprocess.Popen([*FEDSEC, *FEDCG, str(tmp_path)], stdout=subprocess.DEVNULL,
                                stderr=child, stdin=subprocess.DEVNULL)
        os.close(child)
        chunks = []
        while True:
            ready, _, _ = select.select([main], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=120) == 0
    finally:
        os.close(main)
    text = b"".join(chunks).decode()
    assert "\rfedcg-secure CG [" in text and "epochs" in text
