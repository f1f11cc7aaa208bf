"""One writer per output directory, and a directory that always holds one run's files."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from fedsec.errors import ValidationError
from fedsec.outdir import DirectoryBusyError, hold
from fedsec.plan import RunConfig
from fedsec.runner import run
from fedsec.transcript import check_file

HOLDER = """
import sys, time
from fedsec.outdir import hold
with hold(sys.argv[1], "fedsec audit"):
    print("holding", flush=True)
    time.sleep(60)
"""


def test_a_second_writer_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "out")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        busy = rf"fedsec audit \(process {holder.pid}\)"
        with pytest.raises(DirectoryBusyError, match=busy), hold(tmp_path / "out", "x"):
            pass
        proc = subprocess.run([sys.executable, "-m", "fedsec.cli.main", "run", "secure-sum",
                               "--out", str(tmp_path / "out")], capture_output=True, text=True,
                              timeout=120, check=False)
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1
        assert "is being written by fedsec audit" in proc.stderr
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    with hold(tmp_path / "out", "fedsec run"):  # released when its holder died
        pass


def test_a_file_is_not_an_output_directory(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValidationError, match="is a file"), hold(tmp_path / "f", "x"):
        pass


def test_a_failed_rerun_leaves_no_old_result_beside_its_transcript(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fedsec.protocols.secure_sum import SecureSum

    config = RunConfig(protocol="secure-sum", dataset="iris")
    run(config, tmp_path)
    assert (tmp_path / "result.json").is_file() and check_file(
        tmp_path / "transcript.arrow").status == "intact"

    def fail(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the run failed")

    monkeypatch.setattr(SecureSum, "run", fail)
    with pytest.raises(RuntimeError):
        run(config, tmp_path)
    assert not (tmp_path / "result.json").exists()
    assert not (tmp_path / "private.npz").exists()
    assert check_file(tmp_path / "transcript.arrow").status == "aborted"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (Linux)")
def test_an_unwritable_target_is_a_one_line_usage_error(tmp_path: Path) -> None:
    # /proc refuses new entries even to root (a read-only folder would not stop root)
    with pytest.raises(ValidationError, match="Cannot write to"), hold("/proc/fedsec-x", "x"):
        pass
    proc = subprocess.run([sys.executable, "-m", "fedsec.cli.main", "run", "secure-sum",
                           "--out", "/proc/fedsec-x"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("plant", ["symlink", "dangling", "hardlink", "fifo"])
def test_a_planted_lock_file_is_never_written_through(tmp_path: Path, plant: str) -> None:
    import os

    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    lock = out / ".fedsec.lock"
    if plant == "symlink":
        lock.symlink_to("../victim")
    elif plant == "dangling":
        lock.symlink_to("../created-by-fedsec")
    elif plant == "hardlink":
        os.link(victim, lock)
    else:
        os.mkfifo(lock)
    with pytest.raises(ValidationError, match="not fedsec's lock file"), hold(out, "x"):
        pass
    assert victim.read_text() == "precious"
    assert not (tmp_path / "created-by-fedsec").exists()


def test_the_lock_file_is_owner_only_and_gone_after(tmp_path: Path) -> None:
    with hold(tmp_path / "out", "x") as out:
        assert (out / ".fedsec.lock").stat().st_mode & 0o777 == 0o600
    assert not (tmp_path / "out" / ".fedsec.lock").exists()
