"""Stopping an audit: SIGTERM and Ctrl-C end the workers and release the folder, with the
shell's exit codes; a lock left by a dead holder is stale; an interrupted report is not left
as a finished one; ``--cell ID`` runs a finished cell again (by subprocess where a user would)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fedsec.audit import load_spec, run_audit
from fedsec.outdir import LOCK_FILE, hold

#: Writes the slow attack module into a folder (the fixture of tests/audit/conftest.py).
SlowAttack = Callable[[Path], str]

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]

SCENARIO = """
[audit]
name = "slow"
protocols = ["secure-sum"]
dataset = "iris"
seeds = [0, 1, 2, 3, 4, 5]

[[attacks]]
name = "slow_attack:SlowReadout"
as = ["aggregator"]
params = { seconds = 1.5 }
"""


def scenario(tmp_path: Path, slow_attack: SlowAttack) -> Path:
    slow_attack(tmp_path)
    path = tmp_path / "slow.toml"
    path.write_text(textwrap.dedent(SCENARIO))
    return path


def group_members(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (zombies aside)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(stat.parent.name))
    return members


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    """Whatever a failing test leaves in the groups it started is killed after it."""
    yield
    for pgid in STARTED:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    STARTED.clear()


STARTED: list[int] = []


def start_and_stop(tmp_path: Path, spec: Path, signum: int, *, group: bool, jobs: str = "2",
                   extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen[str], str]:
    """Start an audit in its own process group, send ``signum`` once two cells are done (to
    the whole group, as a terminal's Ctrl-C, or to the main process alone, as ``timeout``
    and CI do), and wait for it to end."""
    out = tmp_path / "out"
    proc = subprocess.Popen([*FEDSEC, "audit", str(spec), "--out", str(out), "--jobs", jobs,
                             *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    STARTED.append(proc.pid)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / "cells").glob("*.json"))) < 2:
        time.sleep(0.05)
    if jobs != "1":
        assert len(group_members(proc.pid)) > 1  # the workers are running
    (os.killpg if group else os.kill)(proc.pid, signum)
    _, stderr = proc.communicate(timeout=60)
    return proc, stderr


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc (Linux)")
def test_sigterm_ends_the_workers_releases_the_folder_and_the_rerun_resumes(
        tmp_path: Path, slow_attack: SlowAttack) -> None:
    spec = scenario(tmp_path, slow_attack)
    proc, stderr = start_and_stop(tmp_path, spec, signal.SIGTERM, group=False)
    assert proc.returncode == 143, stderr
    assert "terminated (SIGTERM)" in stderr
    deadline = time.monotonic() + 10
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_members(proc.pid) == []  # no worker outlives the audit
    out = tmp_path / "out"
    assert not (out / LOCK_FILE).exists()
    assert not (out / "report.html").exists()
    done = len(list((out / "cells").glob("*.json")))
    assert 2 <= done < 6
    rerun = subprocess.run([*FEDSEC, "audit", str(spec), "--out", str(out), "--jobs", "2"],
                           capture_output=True, text=True, timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr
    assert f"6 cells, {done} already done, {6 - done} to run" in rerun.stderr


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc (Linux)")
def test_sigterm_stops_a_local_dask_cluster_too(tmp_path: Path,
                                                slow_attack: SlowAttack) -> None:
    pytest.importorskip("distributed")
    proc, stderr = start_and_stop(tmp_path, scenario(tmp_path, slow_attack), signal.SIGTERM,
                                  group=False, extra=("--executor", "dask"))
    assert proc.returncode == 143, stderr
    deadline = time.monotonic() + 10
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_members(proc.pid) == []
    assert not (tmp_path / "out" / LOCK_FILE).exists()


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc (Linux)")
def test_ctrl_c_to_the_whole_group_exits_130_without_leftovers(
        tmp_path: Path, slow_attack: SlowAttack) -> None:
    proc, stderr = start_and_stop(tmp_path, scenario(tmp_path, slow_attack), signal.SIGINT,
                                  group=True)
    assert proc.returncode == 130, stderr
    assert "fedsec: interrupted" in stderr and "Traceback" not in stderr
    deadline = time.monotonic() + 10
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_members(proc.pid) == []
    assert not (tmp_path / "out" / LOCK_FILE).exists()


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc (Linux)")
def test_a_killed_audit_takes_its_workers_with_it(tmp_path: Path,
                                                  slow_attack: SlowAttack) -> None:
    proc, _ = start_and_stop(tmp_path, scenario(tmp_path, slow_attack), signal.SIGKILL,
                             group=False)
    assert proc.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_members(proc.pid) == []  # each worker ends with its parent
    with hold(tmp_path / "out", "the rerun"):  # the lock file is left, but not held
        pass


HOLDER = """
import os, sys, time
from fedsec.outdir import hold
with hold(sys.argv[1], "fedsec audit"):
    ready, say = os.pipe()
    if os.fork() == 0:  # a worker forked by the holder: it must not keep the lock
        os.write(say, b"x")  # (what runs at fork has run)
        time.sleep(60)
        os._exit(0)
    os.read(ready, 1)
    print("holding", flush=True)
    time.sleep(60)
"""

ORPHAN = """
import fcntl, json, os, sys, time
from fedsec.outdir import _where
lock, dead = sys.argv[1], int(sys.argv[2])
fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
record = {"pid": dead, "what": "fedsec audit", **_where()}
if len(sys.argv) > 3:
    record["host"] = sys.argv[3]
os.write(fd, json.dumps(record).encode())
print("holding", flush=True)
time.sleep(60)
"""


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    probe = subprocess.Popen([sys.executable, "-c", "pass"])
    probe.wait()
    return probe.pid


def test_a_forked_child_does_not_keep_the_lock(tmp_path: Path) -> None:
    import fcntl

    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    STARTED.append(holder.pid)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        holder.kill()  # the holder dies at once (no cleanup); its forked child lives on
        holder.wait()
        fd = os.open(tmp_path / LOCK_FILE, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nobody holds it
        finally:
            os.close(fd)
    finally:
        os.killpg(holder.pid, signal.SIGKILL)


@pytest.mark.parametrize(("host", "taken_over"), [(None, True), ("another-machine", False)])
def test_a_lock_whose_recorded_holder_is_dead_is_stale(tmp_path: Path, host: str | None,
                                                       taken_over: bool) -> None:
    from fedsec.outdir import DirectoryBusyError

    dead = dead_pid()
    orphan = subprocess.Popen([sys.executable, "-c", ORPHAN, str(tmp_path / LOCK_FILE),
                               str(dead), *([host] if host else [])],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert orphan.stdout is not None and orphan.stdout.readline().strip() == "holding"
        if taken_over:
            with hold(tmp_path, "fedsec audit"):
                record = json.loads((tmp_path / LOCK_FILE).read_text())
                assert record["pid"] == os.getpid()
        else:  # another machine's pid proves nothing here
            with pytest.raises(DirectoryBusyError, match=f"process {dead}"), \
                    hold(tmp_path, "fedsec audit"):
                pass
    finally:
        orphan.kill()
        orphan.wait()


def test_an_interrupted_report_leaves_no_report(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import fedsec.report
    from fedsec.cli import audit_cmd

    def interrupted(out: Path) -> dict[str, object]:
        (Path(out) / "report.html").write_text("half")
        raise KeyboardInterrupt

    (tmp_path / "results.csv").write_text("an earlier report's")
    monkeypatch.setattr(fedsec.report, "build_report", interrupted)
    with pytest.raises(KeyboardInterrupt):
        audit_cmd._report(tmp_path)
    assert not any((tmp_path / name).exists() for name in audit_cmd.REPORT_FILES)


def test_cell_runs_a_finished_cell_again(tmp_path: Path, slow_attack: SlowAttack) -> None:
    spec_path = scenario(tmp_path, slow_attack)
    spec_path.write_text(spec_path.read_text().replace("seconds = 1.5", "seconds = 0.0"))
    spec = load_spec(spec_path)
    out = tmp_path / "out"
    cells = run_audit(spec, out)
    first, other = cells[0], cells[1]
    files = {c["cell"]: out / "cells" / f"{c['cell']}.json" for c in cells}
    before = {cell: path.stat().st_mtime_ns for cell, path in files.items()}
    assert first["command"].endswith(f"--cell {first['cell']}")
    argv = first["command"].split()[2:]  # the recorded command, run as recorded
    rerun = subprocess.run([*FEDSEC, "audit", *argv], capture_output=True, text=True,
                           timeout=300, check=False, cwd=Path.cwd())
    assert rerun.returncode == 0, rerun.stderr
    assert "1 cells, 0 already done, 1 to run" in rerun.stderr
    assert f"cell {first['cell']} ran before: its result is replaced" in rerun.stderr
    assert files[first["cell"]].stat().st_mtime_ns > before[first["cell"]]
    assert files[other["cell"]].stat().st_mtime_ns == before[other["cell"]]
