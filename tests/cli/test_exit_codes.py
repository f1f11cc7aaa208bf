"""Exit codes agree across subcommands, and a user's mistake never reads "internal error"."""

from __future__ import annotations

import subprocess
import sys
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
