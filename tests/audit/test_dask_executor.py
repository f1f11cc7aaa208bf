"""Audits on Dask: the same cells as the local pool, a killed worker, refused workers, cells
whose components are missing on the workers, and the usage error without distributed.

Every cluster listens on 127.0.0.1 only. A watchdog ends the test process if a test hangs.
"""

from __future__ import annotations

import faulthandler
import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")

from fedsec.audit import load_spec, run_audit  # noqa: E402
from fedsec.audit.dask_executor import (  # noqa: E402
    PLUGIN_NAME,
    FedsecWorkerSetup,
    WorkerRefusedError,
    connected,
)
from fedsec.results import versions  # noqa: E402

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]
WATCHDOG_SECONDS = 300

#: four cells on Iris, each with an accuracy and two attacks' leakage
FOUR_CELLS = """
[audit]
name = "four"
protocols = ["fedcg-naive", "fedcg-secure"]
dataset = "iris"
partition = "hybrid:cohorts=2,groups=2,centres=per-cohort"
backends = ["plain", "noise"]
secret_seed = 0

[sweep]
n_landmarks = [5]

[[attacks]]
name = "multilateration"
as = ["server"]
scorer = "point-recovery"

[[attacks]]
name = "gram-inference"
as = ["server"]
"""


@pytest.fixture(autouse=True)
def watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two single-threaded worker processes on the loopback interface."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                  memory_limit=0) as local:
        yield local


def write(folder: Path, text: str, name: str = "scenario.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def comparable(value: Any) -> Any:
    """A result without what legitimately differs between two runs: times and the command
    (which names the output folder)."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()
                if k != "command" and not k.endswith("seconds")}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def cells_of(out: Path) -> dict[str, Any]:
    return {p.stem: json.loads(p.read_text()) for p in (out / "cells").glob("*.json")}


def test_the_dask_executor_gives_the_cells_of_one_job(tmp_path: Path, cluster: Any) -> None:
    path = write(tmp_path, FOUR_CELLS)
    serial = run_audit(load_spec(path), tmp_path / "serial", jobs=1)
    address = cluster.scheduler_address
    result = subprocess.run([*FEDSEC, "audit", str(path), "--executor", "dask", "--scheduler",
                             address, "--out", str(tmp_path / "dask")], capture_output=True,
                            text=True, timeout=WATCHDOG_SECONDS - 60, check=False)
    assert result.returncode == 0, result.stderr
    assert f"4 cells, 0 already done, 4 to run on the Dask scheduler at {address}" in result.stderr
    assert len(serial) == 4 and all(c["status"] == "ok" for c in serial)
    on_dask = cells_of(tmp_path / "dask")
    assert set(on_dask) == {c["cell"] for c in serial}
    for cell in serial:
        assert cell["metrics"]["accuracy"] > 0.5
        assert any(a["status"] == "ok" and "advantage" in a["scores"] for a in cell["attacks"])
        assert comparable(on_dask[cell["cell"]]) == comparable(cell)
    assert "four: 4 runs in" in result.stdout and (tmp_path / "dask" / "report.html").is_file()
    assert "authenticates no one" in result.stderr  # a tcp:// scheduler is warned about


def test_a_worker_killed_midway_loses_no_finished_cell(tmp_path: Path, cluster: Any) -> None:
    path = write(tmp_path, FOUR_CELLS.replace('n_landmarks = [5]', 'n_landmarks = [10, 20]'))
    spec = load_spec(path)
    out = tmp_path / "out"
    with distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)
        victim = next(iter(client.run(os.getpid).values()))
    finished: dict[str, int] = {}

    def kill_after_the_first_cell(line: str) -> None:
        if line.startswith("[1/") and not finished:
            finished.update({p.name: p.stat().st_mtime_ns for p in (out / "cells").iterdir()})
            os.kill(victim, signal.SIGKILL)

    cells = run_audit(spec, out, executor="dask", scheduler=cluster.scheduler_address,
                      progress=kill_after_the_first_cell)
    assert len(finished) == 1
    if any(c["status"] != "ok" for c in cells):  # a cell lost with its worker: resume
        messages: list[str] = []
        cells = run_audit(spec, out, executor="dask", scheduler=cluster.scheduler_address,
                          progress=messages.append)
        assert "already done" in messages[0]
    assert len(cells) == 8 and all(c["status"] == "ok" for c in cells)
    after = {p.name: p.stat().st_mtime_ns for p in (out / "cells").iterdir()}
    assert all(after[name] == mtime for name, mtime in finished.items())


def test_a_cell_whose_defence_is_missing_on_the_workers_fails_alone(tmp_path: Path) -> None:
    folder = tmp_path / "scenario"
    module = folder / "rounding_defences.py"
    write(folder, '''
        from dataclasses import dataclass

        from fedsec.interfaces import Defense


        class Rounding(Defense):
            """Round every contribution to a multiple of step."""

            points = frozenset({"secure_sum.contribution"})

            @dataclass(frozen=True, kw_only=True)
            class Params:
                step: float = 10.0

            def transform(self, party, tag, values):
                return (values / self.params.step).round() * self.params.step
    ''', name=module.name)
    path = write(folder, '''
        [audit]
        name = "missing"
        protocols = ["secure-sum"]
        dataset = "iris"
        backends = ["plain"]
        seeds = [0, 1]

        [[defenses]]
        name = "rounding_defences:Rounding"

        [[attacks]]
        name = "contribution-readout"
        as = ["aggregator"]
    ''')
    spec = load_spec(path)  # the client finds the module beside the scenario ...
    module.unlink()  # ... the workers do not
    messages: list[str] = []
    cells = run_audit(spec, tmp_path / "out", executor="dask", jobs=1, progress=messages.append)
    assert messages[0] == "4 cells, 0 already done, 4 to run on Dask (1 local worker(s))"
    assert len(cells) == 4 and all(c["status"] == "error" for c in cells)
    assert all(c["error"].startswith("on a Dask worker: ") and "rounding_defences" in c["error"]
               and c["command"].endswith(f"--cell {c['cell']}") for c in cells)


def test_a_worker_with_other_versions_is_refused(cluster: Any) -> None:
    other = {**versions(), "numpy": "0.0.1"}
    with distributed.Client(cluster) as client:
        with pytest.raises(WorkerRefusedError, match=r"numpy [\d.]+ \(client: 0\.0\.1\)"):
            client.register_plugin(FedsecWorkerSetup(other), name=PLUGIN_NAME)
        client.register_plugin(FedsecWorkerSetup(versions()), name=PLUGIN_NAME)  # accepted


def test_without_distributed_the_dask_executor_is_a_usage_error(tmp_path: Path) -> None:
    path = write(tmp_path, FOUR_CELLS)
    hide = ("import sys; sys.modules['distributed'] = None; "
            "from fedsec.cli.main import main; sys.exit(main())")
    result = subprocess.run([sys.executable, "-c", hide, "audit", str(path), "--executor", "dask",
                             "--out", str(tmp_path / "out")], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "fedsec: error: The Dask executor needs the distributed package: "
        'pip install "fedsec[dask]".']
    assert not (tmp_path / "out").exists()


def test_a_scheduler_needs_the_dask_executor_and_no_jobs(tmp_path: Path) -> None:
    path = write(tmp_path, FOUR_CELLS)
    local = subprocess.run([*FEDSEC, "audit", str(path), "--scheduler", "tcp://127.0.0.1:1"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert local.returncode == 2 and "--executor dask" in local.stderr
    jobs = subprocess.run([*FEDSEC, "audit", str(path), "--executor", "dask", "--jobs", "2",
                           "--scheduler", "tcp://127.0.0.1:1"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert jobs.returncode == 2 and "leave --jobs out" in jobs.stderr


def test_the_local_cluster_is_tls_on_loopback_and_refuses_strangers(
        recwarn: pytest.WarningsRecorder) -> None:
    from distributed import Client, Security

    with connected(None, 1) as client:
        address = client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        workers = list(client.scheduler_info()["workers"])
        assert workers and all(w.startswith("tls://127.0.0.1:") for w in workers)
        assert set(client.run(lambda: 1).values()) == {1}  # the audit's own client runs code
        # any other local process is refused: without credentials, with others, or in clear
        # a client refused while connecting is half-built; collected later, inside the next
        # client's start, its __del__ would wait on the loop that start holds: collect it now
        for stranger in ({}, {"security": Security.temporary()}):
            with pytest.raises((OSError, TypeError, TimeoutError)), \
                    Client(address, timeout=5, **stranger) as other:
                other.run(os.getpid)
            gc.collect()
        with pytest.raises((OSError, TimeoutError)), \
                Client(address.replace("tls://", "tcp://"), timeout=5) as other:
            other.run(os.getpid)
        gc.collect()
    assert not [w for w in recwarn.list if "8787" in str(w.message)]  # no default port taken


def test_an_own_cluster_is_reached_over_tls_with_the_configured_credentials(
        tmp_path: Path) -> None:
    """The documented set-up for a user's own cluster: a tls:// scheduler, the client's
    credentials in Dask's configuration (here its environment variables)."""
    from distributed import Security

    security = Security.temporary()
    files = {}
    for name, pem in (("ca", security.tls_ca_file), ("cert", security.tls_client_cert),
                      ("key", security.tls_client_key)):
        files[name] = tmp_path / f"{name}.pem"
        files[name].write_text(pem)
        files[name].chmod(0o600)
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(files["ca"]),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(files["cert"]),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(files["key"]),
           "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}
    path = write(tmp_path, """
        [audit]
        name = "sum"
        protocols = ["secure-sum"]
        dataset = "iris"

        [[attacks]]
        name = "contribution-readout"
        as = ["aggregator"]
    """)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", protocol="tls://", security=security,
                                  dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                  memory_limit=0) as own:
        args = [*FEDSEC, "audit", str(path), "--executor", "dask", "--scheduler",
                own.scheduler_address, "--out", str(tmp_path / "out")]
        result = subprocess.run(args, capture_output=True, text=True, env=env,
                                timeout=WATCHDOG_SECONDS - 60, check=False)
        assert result.returncode == 0, result.stderr
        assert "authenticates no one" not in result.stderr
        refused = subprocess.run([*args[:-1], str(tmp_path / "refused")], capture_output=True,
                                 text=True, timeout=WATCHDOG_SECONDS - 60, check=False)
        assert refused.returncode == 2  # without the credentials: a one-line usage error
        assert "has no credentials for it" in refused.stderr.strip().splitlines()[-1]
