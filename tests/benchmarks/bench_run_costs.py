"""What a run costs beside its protocol: FDSKL's peak memory, the quick-start's CKKS keys.

Run: ``python tests/benchmarks/bench_run_costs.py [memory|keys] [--repeat 3]
[--iterations 10000] [--modes disk,unrecorded]`` (both parts by default). Prints:

* ``memory`` — FDSKL's paper-scale run (``fedsec run fdskl``: the 20,000-sample synthetic task of
  ``bench_fdskl.py speed``, 4 features, four workers, 10,000 iterations, secret seed 0: a 976 MB
  transcript), each run a fresh process: its peak resident memory against the size of the
  transcript it wrote to disk (goal: at most 0.6 times), beside two floors, the same run with its
  messages delivered but not recorded (what the run needs without any transcript; it writes
  ``result.json`` and ``private.npz`` like the disk run) and the process before the protocol starts
  (interpreter, libraries, data). The two runs alternate, ``--repeat`` pairs; min, median and max.
  ``--iterations`` scales the run down (3,000: a tenth of the transcript).
* ``keys`` — the CKKS cells of the quick-start audit (``audits/quickstart.toml``), run as the
  audit runs them: per cell, the CKKS contexts it builds (goal: one per cell) beside the floor
  that security sets, one per key holder (a party never holds a secret key it did not make), the
  seconds its keys take and the cell's own; then one key pair's cost alone, what any key holder
  pays (TenSEAL's context with its keys, the public part serialized and opened once). The cells'
  rounds alternate with the lone key pairs, ``--repeat`` rounds; min, median and max.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATASET = "classification:n_samples=20000,n_features=4"

CHILD = r"""
import json, os, resource, sys, time
from unittest.mock import patch
from fedsec.runner import RunConfig, run
from fedsec.transcript import Transcript, TranscriptWriter

mode, iterations, dataset, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
if mode == "unrecorded":  # delivered, never recorded: the run without a transcript
    def deliver(self, **message):
        return message["payload"]
    def close(self, status="complete", error=None):
        return Transcript(header=self.header, messages=(),
                          footer={"status": status, "n_messages": 0, "head": ""})
    patch.object(TranscriptWriter, "record", deliver).start()
    patch.object(TranscriptWriter, "close", close).start()
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
before = {}
def progress(message):
    if message.startswith("running") and not before:
        before["rss_mb"] = rss_mb()
config = RunConfig(protocol="fdskl", dataset=dataset, partition="vertical:parties=4",
                   params={"n_iterations": iterations}, secret_seed=0)
start = time.perf_counter()
result = run(config, out, progress=progress)
seconds = time.perf_counter() - start
path = os.path.join(out, "transcript.arrow")
print(json.dumps({
    "seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "start_mb": before["rss_mb"], "head": result.transcript.footer["head"],
    "transcript_mb": os.path.getsize(path) / 1e6 if mode == "disk" else 0.0,
    "test_error": result.outcome.metrics["test_error"]}))
"""


def spread(values: Sequence[float], form: str = "{:.0f}") -> str:
    """``median [min-max]`` of ``values``."""
    ordered = sorted(values)
    return (f"{form.format(median(ordered))} [{form.format(ordered[0])}-"
            f"{form.format(ordered[-1])}]")


def fdskl_run(mode: str, iterations: int) -> dict[str, Any]:
    """One FDSKL run in a fresh process (``disk`` or ``unrecorded``)."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-c", CHILD, mode, str(iterations), DATASET,
                               f"{tmp}/run"], capture_output=True, text=True, check=True,
                              cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def memory(args: argparse.Namespace) -> None:
    modes = [m for m in args.modes.split(",") if m]
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for i in range(args.repeat):  # alternate, so that every mode sees the same machine load
        for mode in modes if i % 2 == 0 else modes[::-1]:
            found[mode].append(fdskl_run(mode, args.iterations))
    print(f"FDSKL, {args.iterations} iterations on {DATASET} (vertical:parties=4, secret seed "
          f"0), fresh processes, {args.repeat} alternated run(s) of each; median [min-max]")
    disk = found.get("disk", [])
    size = disk[0]["transcript_mb"] if disk else float("nan")
    if disk:
        ratios = [r["peak_mb"] / r["transcript_mb"] for r in disk]
        print(f"  written to disk: transcript {size:.0f} MB (head {disk[0]['head'][:16]}), peak "
              f"resident {spread([r['peak_mb'] for r in disk])} MB = "
              f"{spread(ratios, '{:.2f}')}x the transcript (goal <= 0.6x); "
              f"{spread([r['seconds'] for r in disk], '{:.1f}')} s")
    if "unrecorded" in found:
        bare = found["unrecorded"]
        print(f"  floor, messages delivered but not recorded: peak resident "
              f"{spread([r['peak_mb'] for r in bare])} MB"
              + (f" = {spread([r['peak_mb'] / size for r in bare], '{:.2f}')}x the transcript"
                 if disk else "") + f"; {spread([r['seconds'] for r in bare], '{:.1f}')} s")
    starts = [r["start_mb"] for runs in found.values() for r in runs]
    print(f"  floor, the process when the protocol starts (interpreter, libraries, data): "
          f"{spread(starts)} MB" + (f" = {median(starts) / size:.2f}x the transcript"
                                    if disk else ""))


def timed(calls: list[float], function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, adding the seconds of each call to ``calls``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            calls.append(time.perf_counter() - start)
    return wrapper


def one_key_pair() -> float:
    """Seconds for one key holder's CKKS keys at the defaults, with nothing recorded."""
    import tenseal as ts

    start = time.perf_counter()
    context = ts.context(ts.SCHEME_TYPE.CKKS, poly_modulus_degree=8192,
                         coeff_mod_bit_sizes=[60, 40, 40, 60])
    context.global_scale = 2.0**40
    public = context.serialize(save_relin_keys=False)
    context.serialize(save_secret_key=True, save_relin_keys=False)
    ts.context_from(public)
    return time.perf_counter() - start


def keys(args: argparse.Namespace) -> None:
    from fedsec.audit.cell import run_cell
    from fedsec.audit.spec import load_spec
    from fedsec.backends import ckks

    spec = load_spec(ROOT / "audits" / "quickstart.toml")
    cells = [c for c in spec.cells() if c.backend == "ckks"]
    contexts: list[float] = []
    ckks.ts.context = timed(contexts, ckks.ts.context)  # every context a cell builds
    made: list[float] = []
    ckks.CkksBackend._new_keys = timed(made, ckks.CkksBackend._new_keys)
    rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    alone: list[float] = []
    for i in range(args.repeat):  # the cells' round and the lone key pairs, alternated
        for part in ("cells", "alone") if i % 2 == 0 else ("alone", "cells"):
            if part == "alone":
                alone += [one_key_pair() for _ in range(5)]
                continue
            for cell in cells:
                contexts.clear()
                made.clear()
                start = time.perf_counter()
                result = run_cell(spec, cell)
                seconds = time.perf_counter() - start
                if result["status"] != "ok":
                    raise SystemExit(f"{cell.id}: {result.get('error')}")
                label = f"{cell.protocol} n_landmarks={cell.params['n_landmarks']}"
                rows[label]["contexts"].append(len(contexts))
                rows[label]["keys"].append(sum(made))
                rows[label]["seconds"].append(seconds)
    holders = {f"{c.protocol} n_landmarks={c.params['n_landmarks']}": key_holders(spec, c)
               for c in cells}
    print(f"The quick-start's {len(cells)} CKKS cells (audits/quickstart.toml), as the audit runs "
          f"them, {args.repeat} alternated round(s); median [min-max]")
    for label, row in rows.items():
        print(f"  {label:26s} CKKS contexts {spread(row['contexts'])} (goal 1; floor "
              f"{holders[label]}: its key holders) | keys {spread(row['keys'], '{:.3f}')} s "
              f"of {spread(row['seconds'], '{:.2f}')} s")
    total = [sum(r["keys"][i] for r in rows.values()) for i in range(args.repeat)]
    cell_total = [sum(r["seconds"][i] for r in rows.values()) for i in range(args.repeat)]
    print(f"  all CKKS cells: keys {spread(total, '{:.2f}')} s of "
          f"{spread(cell_total, '{:.2f}')} s "
          f"({spread([k / c for k, c in zip(total, cell_total, strict=True)], '{:.0%}')})")
    print(f"  floor, one key pair alone (TenSEAL context and keys, public part serialized and "
          f"opened once, nothing recorded): {spread([1e3 * s for s in alone], '{:.1f}')} ms")


def key_holders(spec: Any, cell: Any) -> int:
    """How many parties of ``cell``'s run hold a secret CKKS key (one run, in memory)."""
    from fedsec.audit.cell import run_config
    from fedsec.runner import run

    result = run(run_config(spec, cell))
    return len({m.sender for m in result.transcript.select(tag="key.hold")
                if m.key_id.startswith("ckks:") and not m.key_id.endswith(":public")})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", nargs="?", choices=["memory", "keys"], default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10000)
    parser.add_argument("--modes", default="disk,unrecorded",
                        help="which FDSKL runs to alternate (disk, unrecorded)")
    args = parser.parse_args()
    if args.part in (None, "keys"):
        keys(args)
    if args.part in (None, "memory"):
        memory(args)


if __name__ == "__main__":
    main()
