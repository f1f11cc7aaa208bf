"""Exit codes agree across subcommands, and a user's mistake never reads "internal error"."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from fedsec.errors import ValidationError
from fedsec.interfaces import Defense

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]


def fedsec(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FEDSEC, *args], capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.mark.parametrize("args", [
    ("inspect", "{missing}.arrow"),
    ("attack", "{missing}.arrow", "--attack", "contribution-readout", "--as", "aggregator"),
    ("audit", "{missing}.toml"),
    ("report", "{missing}"),
    ("run", "secure-sum", "--dataset", "{missing}.csv", "--out", "{tmp}/run"),
])
def test_a_missing_input_is_a_usage_error_everywhere(tmp_path: Path, args: tuple[str, ...]) -> None:
    filled = [a.format(missing=tmp_path / "nothing-here", tmp=tmp_path) for a in args]
    proc = fedsec(*filled)
    assert proc.returncode == 2, proc.stderr
    assert "internal error" not in proc.stderr


def test_user_mistakes_get_one_line_naming_the_fix(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("not a folder")
    out_is_file = fedsec("run", "secure-sum", "--dataset", "iris", "--out", str(a_file))
    assert out_is_file.returncode == 2 and "is a file; name a folder" in out_is_file.stderr
    run_dir = tmp_path / "run"
    assert fedsec("run", "secure-sum", "--dataset", "iris", "--out", str(run_dir)).returncode == 0
    wrong_scorer = fedsec("attack", str(run_dir / "transcript.arrow"), "--attack",
                          "contribution-readout", "--as", "aggregator", "--truth", str(run_dir),
                          "--scorer", "point-recovery")
    assert wrong_scorer.returncode == 2, wrong_scorer.stderr
    assert "internal error" not in wrong_scorer.stderr
    assert "--scorer reconstruction-error" in wrong_scorer.stderr


def test_a_plug_in_whose_parameter_check_raises_value_error_is_a_validation_error() -> None:
    class Fussy(Defense):
        @dataclass(frozen=True, kw_only=True)
        class Params:
            level: int = 1

            def __post_init__(self) -> None:
                if self.level > 3:
                    raise ValueError("level must be at most 3")

    Fussy.name = "fussy"
    with pytest.raises(ValidationError, match="level must be at most 3"):
        Fussy(level=5)


def stopping(monkeypatch: pytest.MonkeyPatch, handler: Callable[[argparse.Namespace], int],
             capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit code and standard error of a command whose handler is ``handler``."""
    from fedsec.cli import main

    parser = argparse.ArgumentParser(prog="fedsec")
    parser.set_defaults(handler=handler, debug=False)
    monkeypatch.setattr(main, "build_parser", lambda: parser)
    code = main.main([])
    return code, capsys.readouterr().err


def test_an_interrupt_exits_130_and_a_termination_143(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from fedsec.cli.signals import Terminated

    def interrupted(_args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    def terminated(_args: argparse.Namespace) -> int:
        raise Terminated(signal.SIGTERM)

    assert stopping(monkeypatch, interrupted, capsys) == (130, "fedsec: interrupted\n")
    assert stopping(monkeypatch, terminated, capsys) == (143,
                                                         "fedsec: terminated (SIGTERM)\n")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_a_library_swallowed_still_stops_the_command(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], signum: int,
        code: int) -> None:
    from fedsec.cli.signals import Terminated

    def swallowing(_args: argparse.Namespace) -> int:
        try:
            os.kill(os.getpid(), signum)
            time.sleep(5)  # the handler raises here
        except (KeyboardInterrupt, Terminated):
            pass  # as a careless library would
        return 0

    before = signal.getsignal(signum)
    result = stopping(monkeypatch, swallowing, capsys)
    assert result[0] == code and "fedsec: " in result[1]
    assert signal.getsignal(signum) == before  # the handlers are given back


def test_a_scenario_with_many_problems_prints_one_a_line(tmp_path: Path) -> None:
    spec = tmp_path / "wide.toml"
    spec.write_text('[audit]\nprotocols = ["fedcg-naive"]\ndataset = "iris"\n'
                    '[sweep]\nn_landmarks = {start = 113, stop = 2000}\n'
                    '[[attacks]]\nname = "multilateration"\nas = "server"\n')
    proc = fedsec("audit", str(spec), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0] == f"fedsec: error: {spec} has 1,888 problem(s):"
    assert len(lines) == 22 and lines[-1].startswith("  ... and 1,868 more")
    assert len(proc.stderr) < 10_000
