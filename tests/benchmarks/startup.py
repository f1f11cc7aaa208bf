"""Start-up time of the ``fedsec`` command against the interpreter's own floor.

Times, side by side in one run and in rotation (so a busy spell hits every command alike),
``python -c pass`` and ``python -c "import numpy"`` (the floors), ``fedsec --help`` and
``fedsec run secure-sum --dataset iris --out TMP``, each as a fresh process. Prints the best
and the range of each, the ratios of the best times to the floors, and the verdict on the
goals: ``--help`` under 0.3 s and the iris run under 1 s of wall time (meant for an idle
machine: run nothing else meanwhile)::

    python tests/benchmarks/startup.py --repeat 7

``--baseline DIR`` also times the two fedsec commands with ``DIR`` first on ``PYTHONPATH``
(an older fedsec laid out as installed, ``fedsec/protocols`` and the other plug-in folders
inside ``fedsec/``) and prints the speed-up of this checkout over it.

The commands run through ``sys.executable -m fedsec.cli.main``, the same code as the
``fedsec`` console script (whose wrapper adds the same import of ``fedsec.cli.main``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

PASS, NUMPY = "python -c pass", "python -c 'import numpy'"
GOALS = {"fedsec --help": 0.3, "fedsec run secure-sum --dataset iris": 1.0}


BASELINE = " [baseline]"


def commands(out: str, baseline: str | None) -> dict[str, tuple[list[str], str | None]]:
    """Each timed command and the ``PYTHONPATH`` it runs with, by the name printed."""
    python = sys.executable
    fedsec = {
        "fedsec --help": [python, "-m", "fedsec.cli.main", "--help"],
        "fedsec run secure-sum --dataset iris": [
            python, "-m", "fedsec.cli.main", "run", "secure-sum", "--dataset", "iris",
            "--out", out],
    }
    table: dict[str, tuple[list[str], str | None]] = {
        PASS: ([python, "-c", "pass"], None),
        NUMPY: ([python, "-c", "import numpy"], None),
        **{name: (argv, None) for name, argv in fedsec.items()},
    }
    if baseline is not None:
        table.update({name + BASELINE: (argv, baseline) for name, argv in fedsec.items()})
    return table


def wall_seconds(argv: Sequence[str], out: str, pythonpath: str | None) -> float:
    """Wall time of one fresh process (the output folder removed first)."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    started = time.perf_counter()  # run from the output's folder: no checkout on sys.path[0]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env, cwd=os.path.dirname(out))
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each command")
    parser.add_argument("--baseline", metavar="DIR", help="an older fedsec to compare with")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        table = commands(out, args.baseline)
        for argv_, path in table.values():  # warm the file cache and the bytecode
            wall_seconds(argv_, out, path)
        times: dict[str, list[float]] = {name: [] for name in table}
        for _ in range(args.repeat):
            for name, (argv_, path) in table.items():
                times[name].append(wall_seconds(argv_, out, path))
    best = {name: min(values) for name, values in times.items()}
    print(f"{args.repeat} runs each, in rotation; load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores")
    print(f"{'command':50} {'best s':>8} {'range s':>15} {'/ pass':>7} {'/ numpy':>8}")
    for name, values in times.items():
        print(f"{name:50} {best[name]:8.3f} {min(values):7.3f}-{max(values):<7.3f} "
              f"{best[name] / best[PASS]:7.1f} {best[name] / best[NUMPY]:8.2f}")
    if args.baseline is not None:
        for name in GOALS:
            print(f"speed-up of {name} over the baseline (best / best): "
                  f"{best[name + BASELINE] / best[name]:.1f}x")
    failed = False
    for name, goal in GOALS.items():
        met = best[name] < goal
        failed |= not met
        print(f"goal: {name} under {goal} s: {'met' if met else 'NOT met'} "
              f"(best {best[name]:.3f} s, range {min(times[name]):.3f}-{max(times[name]):.3f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
