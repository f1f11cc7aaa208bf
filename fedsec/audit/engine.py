"""Running an audit: the grid in parallel, resumable, one atomic result file per cell."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

from fedsec.audit.cell import cell_key, run_cell, stored_cell_problem
from fedsec.audit.secret import audit_secret
from fedsec.audit.spec import AuditSpec, Cell, parse_spec
from fedsec.errors import ValidationError
from fedsec.outdir import hold
from fedsec.progress import Progress, ProgressHook
from fedsec.results import versions, write_json
from fedsec.threads import thread_limit

CELLS_DIR = "cells"
SCENARIO_FILE = "scenario.json"
#: where the cells run: this machine's process pool, or a Dask cluster
EXECUTORS = ("local", "dask")

_WORKER_SPEC: AuditSpec | None = None


def cell_path(out_dir: Path, cell: Cell) -> Path:
    """Where one cell's result lives."""
    return out_dir / CELLS_DIR / f"{cell.id}.json"


def is_done(out_dir: Path, cell: Cell, key: str | None = None) -> bool:
    """A cell is done when its file holds a successful result this fedsec wrote for it (its
    schema and id checked: :func:`~fedsec.audit.cell.stored_cell_problem`) and, given its
    ``key`` (:func:`~fedsec.audit.cell.cell_key`), computed from the same configuration,
    inputs and versions."""
    result = stored_cell(out_dir, cell)
    return (result is not None and result["status"] == "ok"
            and (key is None or result.get("key") == key))


def stored_cell(out_dir: Path, cell: Cell) -> dict[str, Any] | None:
    """The result stored for ``cell``, or None when there is none or it is not a valid cell
    result of this cell (damaged, planted, of another schema or another cell)."""
    path = cell_path(out_dir, cell)
    if not path.is_file():
        return None
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None  # damaged: run it again
    return result if stored_cell_problem(result, cell.id) is None else None


def rerun_command(spec: AuditSpec, out_dir: Path, cell: Cell) -> str:
    """The one command that reruns this cell alone (``--cell ID`` runs it again even when its
    result is stored, and replaces that result)."""
    return " ".join(["fedsec", "audit", shlex.quote(spec.source), "--out",
                     shlex.quote(str(out_dir)), "--cell", cell.id])


def run_audit(spec: AuditSpec, out_dir: str | os.PathLike[str], *, jobs: int = 1,
              executor: str = "local", scheduler: str | None = None,
              only: str | None = None, progress: Callable[[str], None] | None = None,
              on_progress: ProgressHook | None = None) -> list[dict[str, Any]]:
    """Run every cell not already done; returns the results of all cells of the grid.

    Each result is written to ``OUT/cells/ID.json`` (atomically) as soon as it
    is known, so an interrupted audit resumes where it stopped; ``only`` (a cell's id) runs that
    cell again, finished or not, and replaces its result. ``progress`` gets a line of
    text per finished cell; with ``on_progress`` each finished cell is instead a
    :class:`~fedsec.progress.Progress` over every cell of the grid (cells done before a resume
    count as done), its line as the note.

    ``executor`` is ``"local"`` (``jobs`` processes of this machine; one runs the cells here)
    or ``"dask"``: the cells run on the Dask scheduler at ``scheduler``
    (``tcp://HOST:PORT``), or on a local cluster of ``jobs`` workers
    (:mod:`fedsec.audit.dask_executor`; the ``dask`` extra).

    An exception here (``KeyboardInterrupt`` among them) stops the workers and the cluster it
    started, and releases the folder, before it propagates; finished cells stay.
    """
    check_executor(executor, scheduler)
    thread_limit()  # a bad FEDSEC_THREADS is refused before anything runs
    with hold(out_dir, "fedsec audit") as out:
        return run_cells(spec, out, jobs=jobs, executor=executor, scheduler=scheduler,
                         only=only, progress=progress, on_progress=on_progress)


def check_executor(executor: str, scheduler: str | None) -> None:
    """Refuse an unknown executor, a scheduler without Dask, or Dask without distributed."""
    if executor not in EXECUTORS:
        raise ValidationError(f"The executor must be one of {', '.join(EXECUTORS)}. "
                              f"Got {executor!r} instead.")
    if scheduler is not None and executor != "dask":
        raise ValidationError("A scheduler address needs the Dask executor: add "
                              "--executor dask (executor='dask').")
    if executor == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ValidationError('The Dask executor needs the distributed package: '
                                  'pip install "fedsec[dask]".') from None


def run_cells(spec: AuditSpec, out: Path, *, jobs: int = 1, executor: str = "local",
              scheduler: str | None = None, only: str | None = None,
              progress: Callable[[str], None] | None = None,
              on_progress: ProgressHook | None = None) -> list[dict[str, Any]]:
    """:func:`run_audit` in a folder this process already holds (:func:`fedsec.outdir.hold`),
    so that the caller can build the report before letting it go."""
    say = progress or (lambda _m: None)
    (out / CELLS_DIR).mkdir(parents=True, exist_ok=True)
    base, origin = audit_secret(out, spec.secret_seed)
    spec = replace(spec, secret_seed=base)
    write_json(out / SCENARIO_FILE, {"source": spec.source, "name": spec.name,
                                     "description": spec.description, "scenario": spec.raw,
                                     "base_dir": spec.base_dir, "versions": versions(),
                                     "secret_seed": origin})
    cells = spec.cells()
    if only is not None:
        cells = [c for c in cells if c.id == only]
        if not cells:
            raise ValidationError(f"No cell {only!r} in {spec.source}; the ids are printed by "
                                  "'fedsec audit' and stored in the result files.")
    digests: dict[str, str] = {}
    keys = {c.id: cell_key(spec, c, digests) for c in cells}
    todo = cells if only is not None else [c for c in cells if not is_done(out, c, keys[c.id])]
    warm_up = _WarmUp(len(todo), 0 if scheduler is not None else max(jobs, 1))
    already = len(cells) - len(todo)
    where = (f"with {jobs} job(s)" if executor == "local"
             else f"on Dask ({jobs} local worker(s))" if scheduler is None
             else f"on the Dask scheduler at {scheduler}")
    again = (f" (cell {only} ran before: its result is replaced)"
             if only is not None and is_done(out, cells[0], keys[cells[0].id]) else "")
    say(f"{len(cells)} cells, {already} already done, {len(todo)} to run {where}{again}")
    if on_progress is not None and todo:
        on_progress(Progress("audit", already, len(cells), "cell", resumed=already))
    try:  # closed on any exception too: that stops the workers, or the cluster, at once
        with contextlib.closing(_results(spec, out, todo, jobs) if executor == "local"
                                else _dask_results(spec, out, todo, jobs, scheduler)) as results:
            _collect(results, out, todo, keys, len(cells), already, say, on_progress,
                     warm_up)
        warm_up.finished(len(todo))
    finally:
        # never leave it drawing in native code while the report starts or the process exits
        warm_up.join()
    return [result for c in cells if (result := stored_cell(out, c)) is not None]


def _collect(results: Iterator[dict[str, Any]], out: Path, todo: list[Cell],
             keys: dict[str, str], n_cells: int, already: int, say: Callable[[str], None],
             on_progress: ProgressHook | None, warm_up: _WarmUp) -> None:
    """Write each result as it arrives (with the key it was computed from), and say so."""
    started = time.perf_counter()
    for i, result in enumerate(results, start=1):
        warm_up.finished(i)
        cell = next(c for c in todo if c.id == result["cell"])
        result["key"] = keys[cell.id]
        write_json(cell_path(out, cell), result)
        status = result["status"] if result["status"] != "error" else f"error: {result['error']}"
        if on_progress is not None:
            on_progress(Progress("audit", already + i, n_cells, "cell", resumed=already,
                                 note=cell_line(cell, status, result["seconds"])))
            continue
        elapsed = time.perf_counter() - started
        left = elapsed / i * (len(todo) - i)
        say(f"[{i}/{len(todo)}] {cell_line(cell, status, result['seconds'])[:-1]}, "
            f"{elapsed:.0f} s elapsed"
            + (f", about {left:.0f} s left)" if i < len(todo) else ")"))


def cell_line(cell: Cell, status: str, seconds: float) -> str:
    """What a finished cell says: its configuration, seed, status and time."""
    return f"{cell.configuration} | seed {cell.seed}: {status} ({seconds:.1f} s)"


class _WarmUp:
    """Prepares plotting (:func:`_prepare_plotting`) on a core the cells leave idle: at once
    when they leave one (a serial audit on two cores; a remote cluster), else once fewer cells
    are left than run at a time (the grid's tail), so it never takes a core from a cell.

    ``busy`` is how many of this machine's cores the cells take while all of them run.
    """

    def __init__(self, n_cells: int, busy: int) -> None:
        cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                 else os.cpu_count() or 1)
        self._n_cells, self._busy, self._cores = n_cells, busy, cores
        self._thread = threading.Thread(target=_prepare_plotting, daemon=True,
                                        name="fedsec-plotting-warm-up")
        self.finished(0)

    def finished(self, n: int) -> None:
        """``n`` cells have finished: start when a core is idle."""
        running = min(self._busy, self._n_cells - n)
        if not self._thread.ident and running < self._cores:
            self._thread.start()

    def join(self) -> None:
        """Wait for it, if it started."""
        if self._thread.ident:
            self._thread.join()


def _prepare_plotting() -> None:
    """Import the plotting library and load its fonts while the grid runs, so the report does
    not wait for them (a figure of its own, outside pyplot's shared state)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # the import is the work
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 2), dpi=50)
    axes = figure.subplots()
    axes.plot([0, 1], [0, 1], marker="o", label="warm-up")
    axes.legend(fontsize=6)
    axes.set_title("warm-up", fontsize=10)
    figure.savefig(io.BytesIO(), format="png")


def _results(spec: AuditSpec, out: Path, todo: list[Cell],
             jobs: int) -> Generator[dict[str, Any], None, None]:
    """Each cell's result, in the order they finish.

    Workers are forked on Linux (fast: they share the parent's imports), unless PyTorch is
    loaded in this process: its thread pools do not survive a fork, so the workers are then
    spawned fresh. A worker imports torch only when one of its cells needs it.
    """
    if jobs <= 1 or len(todo) <= 1:
        for cell in todo:
            yield run_cell(spec, cell, command=rerun_command(spec, out, cell))
        return
    fork = sys.platform.startswith("linux") and "torch" not in sys.modules
    method = "fork" if fork else "spawn"
    context = multiprocessing.get_context(method)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker,
                               initargs=(dict(spec.raw), spec.source, spec.base_dir,
                                         os.getpid(), spec.secret_seed))
    try:
        futures = [pool.submit(_run_in_worker, cell.id, rerun_command(spec, out, cell))
                   for cell in todo]
        for future in as_completed(futures):
            yield future.result()
    except BaseException:  # interrupted, terminated, or closed early: stop the cells now
        stop_workers(pool)
        raise
    pool.shutdown(wait=True)


def stop_workers(pool: ProcessPoolExecutor, grace: float = 5.0) -> None:
    """Cancel what has not started, end the running cells (SIGTERM, then SIGKILL after
    ``grace`` seconds) and wait for every worker to be gone."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()


def _dask_results(spec: AuditSpec, out: Path, todo: list[Cell], jobs: int,
                  scheduler: str | None) -> Generator[dict[str, Any], None, None]:
    if not todo:  # nothing to start a cluster for
        return
    from fedsec.audit.dask_executor import dask_results

    commands = {cell.id: rerun_command(spec, out, cell) for cell in todo}
    yield from dask_results(spec, todo, jobs=jobs, scheduler=scheduler, commands=commands)


def _init_worker(raw: dict[str, Any], source: str, base_dir: str, parent: int,
                 secret_seed: int | None) -> None:
    """Each worker parses the scenario once (finding its ``module:Class`` components beside
    it), takes the audit's secret seed, and uses one thread for linear algebra.

    The parent decides when to stop: a worker ignores the terminal's
    Ctrl-C, ends at once on SIGTERM (which the parent sends), and on Linux gets SIGTERM when
    the parent dies, however it dies.
    """
    global _WORKER_SPEC
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _end_with_parent(parent)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover
        pass
    _WORKER_SPEC = replace(parse_spec(raw, source=source, base_dir=base_dir),
                           secret_seed=secret_seed)


def _end_with_parent(parent: int) -> None:
    """Ask Linux to send this process SIGTERM when its parent ends (no orphan keeps running
    a cell); elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - no prctl
        return
    if os.getppid() != parent:  # the parent ended before the request
        os._exit(1)


def _run_in_worker(cell_id: str, command: str) -> dict[str, Any]:
    spec = _WORKER_SPEC
    assert spec is not None
    cell = next(c for c in spec.cells() if c.id == cell_id)
    return run_cell(spec, cell, command=command)
