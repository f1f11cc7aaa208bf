"""EDM completion speed and accuracy against the goals (a plain script).

Run: ``python tests/benchmarks/bench_edm.py [--repeats 3] [--skip-methods]``.
The attack's problem throughout: n private points and m landmarks uniform in
[0, 1]^d, ``D_XW`` and ``D_W`` known, ``D_X`` hidden. Prints each measurement
and its ratio to the goal:

* Alternating Descent, n = 1,000, m = 50, d = 3: under 10 s;
* SDR (SCS), n + m = 300 (n = 250, m = 50, d = 3): under 60 s;
* every method's relative ``D_X`` error (and time) on an n + m = 300
  instance (a second draw), with the mean-fill baseline and the closed-form
  Nyström answer for reference, plus Soft-Impute with centring.

Times are the median of ``--repeats`` runs of the whole call (validation,
initialisation and solve); the goals are stated for 2 cores.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from statistics import median

import numpy as np

from fedsec.geometry import (
    METHODS,
    assemble_edm,
    complete,
    edm,
    nystrom_completion,
    squared_distances,
)

GOALS = {"alternating-descent": 10.0, "sdr": 60.0}


def problem(n: int, m: int, dim: int, seed: int):
    rng = np.random.default_rng(seed)
    X, W = rng.random((n, dim)), rng.random((m, dim))
    D_XW, D_W = squared_distances(X, W), squared_distances(W)
    D, mask = assemble_edm(None, D_XW, D_W)
    return D, mask, edm(X), D_XW, D_W


def relative_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    n = truth.shape[0]
    return float(np.linalg.norm(estimate[:n, :n] - truth) / np.linalg.norm(truth))


def timed(call: Callable[[], np.ndarray], repeats: int) -> tuple[float, np.ndarray]:
    seconds, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = call()
        seconds.append(time.perf_counter() - start)
    assert out is not None
    return median(seconds), out


def bench_goal(method: str, n: int, m: int, dim: int, repeats: int) -> None:
    D, mask, truth, _, _ = problem(n, m, dim, seed=0)
    seconds, out = timed(
        lambda: complete(D, mask, dim, method, rng=np.random.default_rng(0)), repeats)
    goal = GOALS[method]
    print(f"{method:20s} n={n:5d} m={m:3d} d={dim}: {seconds:7.2f} s "
          f"(goal < {goal:.0f} s, ratio {seconds / goal:.2f}) "
          f"relative D_X error {relative_error(out, truth):.2e}")


def bench_accuracy(n: int, m: int, dim: int) -> None:
    D, mask, truth, D_XW, D_W = problem(n, m, dim, seed=1)
    known = D[mask & ~np.eye(n + m, dtype=bool)]
    baseline = np.full_like(truth, known.mean())
    np.fill_diagonal(baseline, 0.0)
    print(f"\nrelative D_X error, n={n} m={m} d={dim} (D_X hidden):")
    print(f"  {'mean-fill baseline':22s} {relative_error(baseline, truth):.2e}")
    seconds, out = timed(lambda: nystrom_completion(D_XW, D_W), 1)
    print(f"  {'nystrom (closed form)':22s} {relative_error(out, truth):.2e}   {seconds:6.2f} s")
    runs = [(method, method, {}) for method in METHODS]
    runs.append(("soft-impute, centred", "soft-impute", {"center": True}))
    for label, method, options in runs:
        seconds, out = timed(
            lambda method=method, options=options: complete(
                D, mask, dim, method, rng=np.random.default_rng(0), **options), 1)
        print(f"  {label:22s} {relative_error(out, truth):.2e}   {seconds:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-methods", action="store_true",
                        help="only the two timing goals")
    args = parser.parse_args()
    print(f"cpu count {os.cpu_count()}, numpy {np.__version__}")
    bench_goal("alternating-descent", 1000, 50, 3, args.repeats)
    bench_goal("sdr", 250, 50, 3, args.repeats)
    if not args.skip_methods:
        bench_accuracy(250, 50, 3)


if __name__ == "__main__":
    main()
