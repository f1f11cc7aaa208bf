"""Audit engine speed (a plain script): serial threads, parallel speed-up, Dask, report cost.

Run: ``python tests/benchmarks/bench_audit.py`` (with nothing else running). A 16-cell audit
(FedCG naive and secure, plain and noise, four landmark counts, on Breast Cancer) runs

- serially with the linear-algebra libraries' own thread count (``FEDSEC_THREADS=all``, what
  serial runs used before they were limited) and with one thread (the default): wall and CPU
  seconds;
- with the local pool's two jobs: the speed-up over the one-thread serial run (goal: at least
  1.7x on 2 cores), alternated with it ``--repeat`` times (default 3: single runs on a shared
  virtual machine vary by a quarter), beside how much slower each cell runs when two run at
  once, and the machine's own ceilings: two processes against one on pure Python, on copying
  memory and on one-thread linear algebra (what pairs of cells share: the memory bus, caches);
- with ``--executor dask`` on a local cluster of two workers, start-up included, against the
  pool; then again on the warm cluster, for the scheduler's overhead per cell: the worker
  seconds not spent inside cells, per cell (the pool's figure beside it);

and prints the report's share of the audit time (goal: under 10%).
"""

from __future__ import annotations

import os
import resource
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from fedsec.audit import load_spec, run_audit
from fedsec.audit.spec import AuditSpec
from fedsec.report import build_report
from fedsec.threads import ENVIRONMENT_VARIABLE

SCENARIO = """
[audit]
name = "bench"
protocols = ["fedcg-naive", "fedcg-secure"]
dataset = "breast_cancer"
partition = "hybrid:cohorts=2,groups=3,centres=per-cohort"
backends = ["plain", "noise"]

[sweep]
n_landmarks = [25, 50, 75, 100]

[[attacks]]
name = "multilateration"
as = ["server"]
scorer = "point-recovery"

[[attacks]]
name = "gram-inference"
as = ["server"]
"""

N_WORKERS = 2


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def timed(spec: AuditSpec, out: Path, **options: Any) -> tuple[float, float, list[dict]]:
    """Wall seconds, CPU seconds and the cells of one audit into a fresh folder."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    cells = run_audit(spec, out, **options)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    assert len(cells) == 16 and all(c["status"] == "ok" for c in cells), out
    return wall, cpu, cells


def overhead_per_cell(wall: float, cells: list[dict]) -> float:
    """Worker seconds not spent inside a cell, per cell, for ``N_WORKERS`` workers."""
    return (N_WORKERS * wall - sum(c["seconds"] for c in cells)) / len(cells)


def best_speed_up(cells: list[dict]) -> float:
    """The speed-up two workers could reach on these cells' serial times, each cell whole
    (longest first, each to the least loaded worker)."""
    loads = [0.0] * N_WORKERS
    for seconds in sorted((c["seconds"] for c in cells), reverse=True):
        loads[loads.index(min(loads))] += seconds
    return sum(loads) / max(loads)


def _spin(n: int) -> float:
    """Pure Python: the interpreter's loop, in cache."""
    start = time.perf_counter()
    total = 0
    for i in range(n):
        total += i * i
    return time.perf_counter() - start


def _copy(n: int) -> float:
    """Memory-bound numpy: copying 8 MB arrays, more than a core's cache holds."""
    import numpy as np

    a, b = np.ones(1 << 20), np.empty(1 << 20)
    np.copyto(b, a)  # untimed: b's pages faulted in
    start = time.perf_counter()
    for _ in range(n // 25_000):
        np.copyto(b, a)
    return time.perf_counter() - start


def _matmul(n: int) -> float:
    """Linear algebra on one thread: 300 x 300 matrix products."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    a = np.random.default_rng(0).random((300, 300))
    with threadpool_limits(1):
        a @ a  # untimed: the library's first call sets up its buffers
        start = time.perf_counter()
        for _ in range(n // 60_000):
            a @ a
        return time.perf_counter() - start


CEILINGS = {"pure Python": _spin, "copying memory": _copy, "one-thread BLAS": _matmul}


def machine_ceiling(work: Any, n: int = 10_000_000) -> float:
    """Two processes' speed-up on independent copies of ``work`` over one process doing both
    (each process times its own work)."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(N_WORKERS) as workers:
        one = sum(workers.map(work, [n]))  # a warm worker: imports and caches like the pair's
        one += sum(workers.map(work, [n]))
        both = workers.map(work, [n] * N_WORKERS)
    return one / max(both)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.toml"
        path.write_text(textwrap.dedent(SCENARIO))
        spec = load_spec(path)
        assert len(spec.cells()) == 16
        run_audit(spec, Path(tmp) / "warm-up", only=spec.cells()[-1].id)  # lazy imports
        os.environ[ENVIRONMENT_VARIABLE] = "all"
        default = timed(spec, Path(tmp) / "serial-all")
        os.environ[ENVIRONMENT_VARIABLE] = "1"
        serial = timed(spec, Path(tmp) / "serial-1")
        del os.environ[ENVIRONMENT_VARIABLE]
        pool = timed(spec, Path(tmp) / "pool", jobs=N_WORKERS)
        pairs = [(serial, pool)]
        ceilings = {name: [machine_ceiling(work)] for name, work in CEILINGS.items()}
        for i in range(args.repeat - 1):  # alternated, so drift hits both alike
            pairs.append((timed(spec, Path(tmp) / f"serial-again-{i}"),
                          timed(spec, Path(tmp) / f"pool-again-{i}", jobs=N_WORKERS)))
            for name, work in CEILINGS.items():
                ceilings[name].append(machine_ceiling(work))
        dask = timed(spec, Path(tmp) / "dask", executor="dask", jobs=N_WORKERS)
        warm = _warm_dask(spec, Path(tmp))
        start = time.perf_counter()
        build_report(Path(tmp) / "pool")
        report = time.perf_counter() - start
    print(f"load average before and after: {load[0]:.1f}, {os.getloadavg()[0]:.1f} (other "
          "work on the machine stretches wall times; CPU seconds do not depend on it)")
    print(f"16-cell audit, serial: library threads {default[0]:.1f} s wall, {default[1]:.1f} "
          f"CPU-s; one thread {serial[0]:.1f} s wall, {serial[1]:.1f} CPU-s "
          f"(CPU x{default[1] / serial[1]:.2f})")
    print(f"--jobs 2: {pool[0]:.1f} s wall, {pool[1]:.1f} CPU-s; speed-up over the one-thread "
          f"serial run {serial[0] / pool[0]:.2f}x (goal >= 1.7x; the cells' own times allow "
          f"{best_speed_up(serial[2]):.2f}x); over the library-threads run "
          f"{default[0] / pool[0]:.2f}x")
    ups = [one[0] / two[0] for one, two in pairs]
    slower = [sum(c["seconds"] for c in two[2]) / sum(c["seconds"] for c in one[2])
              for one, two in pairs]
    print(f"--jobs 2 against one-thread serial, {len(pairs)} alternated runs: speed-up "
          f"{min(ups):.2f}-{max(ups):.2f}x; each cell takes {min(slower):.2f}-{max(slower):.2f}x "
          f"its serial time when two run at once")
    print("  the machine's ceilings, two processes against one: " + "; ".join(
        f"{name} {min(found):.2f}-{max(found):.2f}x" for name, found in ceilings.items()))
    print("  runs (serial s / pool s): " + ", ".join(f"{one[0]:.1f}/{two[0]:.1f}"
                                                   for one, two in pairs))
    print(f"--executor dask, 2 workers, start-up included: {dask[0]:.1f} s wall, "
          f"{dask[1]:.1f} CPU-s, {dask[0] / pool[0]:.2f}x the pool's time; on the warm "
          f"cluster {warm[0]:.1f} s")
    print(f"overhead per cell (worker seconds outside cells): Dask warm "
          f"{overhead_per_cell(warm[0], warm[1]) * 1000:.0f} ms, local pool "
          f"{overhead_per_cell(pool[0], pool[2]) * 1000:.0f} ms; an empty task's round trip "
          f"{warm[2] * 1000:.1f} ms")
    print(f"report generation {report:.2f} s = {100 * report / pool[0]:.1f}% of the --jobs 2 "
          f"audit (goal < 10%)")


def _warm_dask(spec: AuditSpec, tmp: Path) -> tuple[float, list[dict], float]:
    """The audit on a cluster whose workers have run it once: wall seconds, cells, and the
    median round trip of an empty task."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=N_WORKERS, threads_per_worker=1, processes=True,
                      host="127.0.0.1", dashboard_address=None, memory_limit=0) as cluster:
        address = cluster.scheduler_address
        run_audit(spec, tmp / "dask-first", executor="dask", scheduler=address)
        wall, _cpu, cells = timed(spec, tmp / "dask-warm", executor="dask", scheduler=address)
        with Client(address) as client:
            trips = []
            for _ in range(50):
                start = time.perf_counter()
                client.submit(os.getpid, pure=False).result()
                trips.append(time.perf_counter() - start)
    return wall, cells, sorted(trips)[len(trips) // 2]


if __name__ == "__main__":
    main()
