"""An audit's secret seed: drawn once per output folder (owner-only) unless the scenario pins
it, the root of every cell's party secrets, part of what a stored cell must match."""

from __future__ import annotations

import json
import os
import stat
import textwrap
from pathlib import Path

import pytest

from fedsec.audit import load_spec, run_audit
from fedsec.audit.cell import run_config
from fedsec.audit.secret import SECRET_FILE, audit_secret
from fedsec.audit.spec import AuditSpecError
from fedsec.errors import ValidationError

SCENARIO = """
[audit]
name = "secret"
protocols = ["secure-sum"]
dataset = "iris"
backends = ["plain"]
seeds = [0, 1]
{pin}

[[defenses]]
name = "gaussian-noise"
sigma = [0.5]

[[attacks]]
name = "contribution-readout"
as = ["aggregator"]
"""


def scenario(tmp_path: Path, pin: str = "") -> Path:
    path = tmp_path / "secret.toml"
    path.write_text(textwrap.dedent(SCENARIO.format(pin=pin)))
    return path


def _scores(cells: list[dict[str, object]]) -> dict[str, object]:
    return {str(c["cell"]): json.dumps(c["attacks"][0].get("scores"),  # type: ignore[index]
                                       sort_keys=True)
            for c in cells}


def test_a_drawn_secret_is_kept_owner_only_and_a_resume_reuses_it(tmp_path: Path) -> None:
    spec = load_spec(scenario(tmp_path))
    out = tmp_path / "out"
    first = run_audit(spec, out)
    kept = out / SECRET_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    base = int(kept.read_text())
    assert base.bit_length() > 64
    assert json.loads((out / "scenario.json").read_text())["secret_seed"] == "drawn"  # noqa: S105
    assert str(base) not in (out / "scenario.json").read_text()
    # a resume finds every cell done: the same secret, the same keys
    again = run_audit(spec, out)
    assert _scores(again) == _scores(first)
    # another folder draws another secret: the noisy read-outs differ
    other = run_audit(spec, tmp_path / "other")
    assert int((tmp_path / "other" / SECRET_FILE).read_text()) != base
    noisy = [c for c in first if "gaussian-noise" in str(c["configuration"])]
    assert _scores([c for c in other if c["cell"] in {n["cell"] for n in noisy}]) != \
        _scores(noisy)
    # a lost secret file makes every cell stale: they run again under a new one
    kept.unlink()
    rerun = run_audit(spec, out)
    assert int(kept.read_text()) != base
    assert _scores([c for c in rerun if c["cell"] in {n["cell"] for n in noisy}]) != \
        _scores(noisy)


def test_a_pinned_secret_reproduces_every_cell_in_a_new_folder(tmp_path: Path) -> None:
    spec = load_spec(scenario(tmp_path, "secret_seed = 7"))
    a = run_audit(spec, tmp_path / "a")
    b = run_audit(spec, tmp_path / "b")
    assert _scores(a) == _scores(b)
    assert not (tmp_path / "a" / SECRET_FILE).exists()
    assert json.loads((tmp_path / "a" / "scenario.json").read_text())["secret_seed"] == "scenario"  # noqa: S105
    assert sorted(run_config(spec, c).secret_seed for c in spec.cells()) == [7, 7, 8, 8]


@pytest.mark.parametrize("bad", ["-1", '"x"', "true", "1.5"])
def test_a_bad_pinned_secret_is_refused_by_name(tmp_path: Path, bad: str) -> None:
    with pytest.raises(AuditSpecError, match=r"audit\.secret_seed must be a whole number"):
        load_spec(scenario(tmp_path, f"secret_seed = {bad}"))


def test_a_planted_link_or_garbage_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.symlink(victim, tmp_path / SECRET_FILE)
    with pytest.raises(ValidationError, match=r"cannot be read|symbolic link"):
        audit_secret(tmp_path, None)
    assert victim.read_text() == "precious\n"
    (tmp_path / SECRET_FILE).unlink()
    (tmp_path / SECRET_FILE).write_text("not a number\n")
    with pytest.raises(ValidationError, match="remove it to draw a new one"):
        audit_secret(tmp_path, None)
