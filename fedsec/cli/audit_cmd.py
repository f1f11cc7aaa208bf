"""``fedsec audit`` and ``fedsec report``: run a scenario, rebuild its report.

The handlers import the audit engine and the report builder when they run (see
:mod:`fedsec.cli.main`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from fedsec.cli.output import print_json
from fedsec.cli.progress import Display
from fedsec.errors import ValidationError


def add_parser(sub: Any) -> None:
    p = sub.add_parser("audit", help="run an audit scenario and write its report",
                       description="Run every cell of a TOML scenario (resuming finished ones), "
                                   "then write DIR/report.html, report.md and results.json.")
    p.add_argument("spec", help="the scenario (TOML), e.g. audits/quickstart.toml")
    p.add_argument("--out", help="output directory (default: runs/<scenario name>)")
    p.add_argument("--jobs", type=int, default=None,
                   help="parallel processes, or the local Dask cluster's workers (default: 1)")
    p.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="where the cells run: 'local', this machine's processes (default), "
                        "or 'dask', a Dask cluster (needs pip install \"fedsec[dask]\")")
    p.add_argument("--scheduler", metavar="tls://HOST:PORT",
                   help="with --executor dask: an existing Dask scheduler's address, reached "
                        "with the TLS credentials of Dask's configuration "
                        "(distributed.comm.tls.*; a tcp:// address authenticates no one and "
                        "is warned about) (default: a local cluster of --jobs workers on "
                        "127.0.0.1, TLS with credentials of its own)")
    p.add_argument("--cell", help="run only this cell id (printed in results and reports), "
                                  "again if it ran before: its stored result is replaced")
    p.add_argument("--fail-if", action="append", default=[], metavar="EXPR",
                   help="exit 1 when a leakage threshold is crossed, e.g. "
                        "'leakage.advantage > 0.5' (repeatable); an audit with a failed run "
                        "or a gate that measured nothing exits 1 too, and a metric no "
                        "scorer reports is a usage error (exit 2, before anything runs)")
    p.add_argument("--json", action="store_true", help="print the report data as JSON")
    p.set_defaults(handler=handle_audit)
    r = sub.add_parser("report", help="rebuild an audit's report from its results",
                       description="Rebuild DIR/report.html, report.md and results.json from "
                                   "DIR/cells/*.json.")
    r.add_argument("dir", help="the audit's output directory")
    r.add_argument("--json", action="store_true", help="print the report data as JSON")
    r.set_defaults(handler=handle_report)


def handle_audit(args: argparse.Namespace) -> int:
    from fedsec import registry
    from fedsec.audit import load_spec
    from fedsec.audit.engine import check_executor, run_cells
    from fedsec.audit.gate import Gate, check_gates, evaluate
    from fedsec.outdir import hold
    from fedsec.threads import thread_limit
    from fedsec.validation import check_int

    gates = [Gate.parse(text) for text in args.fail_if]
    if args.jobs is not None and args.scheduler is not None:
        raise ValidationError("--jobs sets the size of a local cluster; with --scheduler the "
                              "cluster's own workers run the cells: leave --jobs out.")
    jobs = 1 if args.jobs is None else args.jobs
    check_int(jobs, owner="fedsec audit", name="--jobs", min_value=1)
    check_executor(args.executor, args.scheduler)
    if args.executor == "dask":
        from fedsec.audit.dask_executor import unauthenticated

        warning = unauthenticated(args.scheduler)
        if warning is not None:
            print(f"fedsec: warning: {warning}", file=sys.stderr)
    thread_limit()  # a bad FEDSEC_THREADS is refused before anything runs
    spec = load_spec(args.spec)
    check_gates(gates, [registry.get("scorer", a.scorer, search=spec.search_path)
                        for a in spec.attacks])
    out = Path(args.out) if args.out else Path("runs") / spec.name
    if out.exists() and not out.is_dir():
        raise ValidationError(f"--out {out} is a file; name a folder for the audit's results "
                              "(it is created if missing).")
    display = None if args.json else Display()  # progress on stderr; --json prints only JSON
    started = time.perf_counter()
    with hold(out, "fedsec audit") as held:  # the report too is written under the lock
        try:
            cells = run_cells(spec, held, jobs=jobs, executor=args.executor,
                              scheduler=args.scheduler, only=args.cell,
                              progress=None if display is None else display.message,
                              on_progress=None if display is None else display.update)
        finally:
            if display is not None:
                display.close()
        audit_seconds = time.perf_counter() - started
        report = _report(held)
    report_seconds = time.perf_counter() - started - audit_seconds
    if args.json:
        print_json({k: v for k, v in report.items() if k != "cells"})
    else:
        print(f"{spec.name}: {len(cells)} runs in {audit_seconds:.1f} s, report in "
              f"{report_seconds:.1f} s")
        for line in report["verdicts"]:
            print(f"  {line}")
        print(f"  wrote {out}/report.html, report.md, results.json")
    failed, lines = evaluate(gates, cells)
    for line in lines:
        print(f"fedsec: {line}", file=sys.stderr)
    return 1 if failed else 0


#: what a report build writes beside the cells (its plots aside)
REPORT_FILES = ("report.html", "report.md", "results.json", "results.csv", "results.parquet")


def _report(out: Path) -> dict[str, Any]:
    """Build the report; when interrupted, remove its files, so that none left half-built
    (a new report.html beside an old results.csv) passes for a finished report."""
    from fedsec.cli.signals import Terminated
    from fedsec.report import build_report

    try:
        return build_report(out)
    except (KeyboardInterrupt, Terminated):
        for name in REPORT_FILES:
            (out / name).unlink(missing_ok=True)
        print(f"fedsec: the report was interrupted and its files removed; the cells are kept: "
              f"'fedsec report {out}' writes it", file=sys.stderr)
        raise


def handle_report(args: argparse.Namespace) -> int:
    report = _report(Path(args.dir))
    if args.json:
        print_json({k: v for k, v in report.items() if k != "cells"})
    else:
        print(f"wrote {args.dir}/report.html, report.md, results.json "
              f"({report['n_cells']} runs, {len(report['configurations'])} configurations)")
    return 0
