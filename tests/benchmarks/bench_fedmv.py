"""What FedMV's IRLS solves and S-FedMV's default run cost, old route against new (plain script).

Run: ``python tests/benchmarks/bench_fedmv.py [--repeats 7] [--pairs 1] [--skip-run]``.

Prints, each as min / median / max over alternated repeats:

* one IRLS system (32 x 32, two classes, as S-FedMV's views build them): the checked
  ``scipy.linalg.solve(G + beta diag(a), B, assume_a="pos")`` against
  :func:`fedsec.protocols.fedmv.maths.solve_spd` on the same systems, and whether the bits agree;
* one IRLS step: the plain loop (``np.linalg.norm`` and scipy's solve) against
  :func:`~fedsec.protocols.fedmv.maths.irls_weights`;
* the first entry into :func:`fedsec.nn.deterministic` in a fresh process, through
  ``torch.use_deterministic_algorithms`` (which imports the compiler) against the eager flag;
* the CPU seconds of one default ``fedsec run s-fedmv --secret-seed 0`` in a fresh process, with
  the old IRLS loop and with the new one (alternated pairs; their metrics must be equal), beside
  the floor that stays: the GRU extractors' training, measured inside the same run.
The goal: the default run within 40 CPU-s with identical metrics.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

import numpy as np
import scipy.linalg

from fedsec.protocols.fedmv import maths

GOAL_CPU_SECONDS = 40.0
DETERMINISTIC_CHILD = """
import resource, sys, torch
from fedsec import nn
if sys.argv[1] == "public":
    nn.set_deterministic_algorithms = lambda torch, mode: torch.use_deterministic_algorithms(mode)
usage = resource.getrusage(resource.RUSAGE_SELF)
start = usage.ru_utime + usage.ru_stime
with nn.deterministic(0):
    pass
usage = resource.getrusage(resource.RUSAGE_SELF)
print(usage.ru_utime + usage.ru_stime - start)
"""


def plain_irls(X: np.ndarray, Z: np.ndarray, beta: float, W0: np.ndarray, *,
               eps: float = 1e-8, tol: float = 1e-8, max_iter: int = 50,
               gram: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """IRLS as it was: ``np.linalg.norm`` and scipy's checked positive definite solve."""
    G = X.T @ X if gram is None else gram
    B = X.T @ Z
    W = np.array(W0, dtype=np.float64)
    for step in range(1, max_iter + 1):
        a = 1.0 / (2.0 * (np.linalg.norm(W, axis=1) + eps))
        W_new = scipy.linalg.solve(G + beta * np.diag(a), B, assume_a="pos")
        change = np.linalg.norm(W_new - W) / max(float(np.linalg.norm(W)), maths.TINY)
        W = W_new
        if change <= tol:
            return W, step
    return W, max_iter


def systems(n: int, seed: int = 0) -> list[tuple[np.ndarray, float, np.ndarray, np.ndarray]]:
    """IRLS's systems: a 45-row Gram of 32 features, its reweighting, two classes."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        X = rng.normal(size=(45, 32))
        a = 1.0 / (2.0 * (np.abs(rng.normal(size=32)) * 10.0 ** rng.uniform(-6, 1, 32) + 1e-8))
        out.append((X.T @ X, float(10.0 ** rng.uniform(-2, 1)), a, X.T @ rng.normal(size=(45, 2))))
    return out


def old_solve(G: np.ndarray, beta: float, a: np.ndarray, B: np.ndarray) -> np.ndarray:
    return scipy.linalg.solve(G + beta * np.diag(a), B, assume_a="pos")


def new_solve(G: np.ndarray, beta: float, a: np.ndarray, B: np.ndarray) -> np.ndarray:
    A = np.array(G, order="C")
    A.ravel()[::G.shape[0] + 1] += beta * a
    return maths.solve_spd(A, B)


def alternate(routes: dict[str, Callable[[], float]], repeats: int) -> dict[str, list[float]]:
    """Each route once per repeat, in turn; the values each returns."""
    out: dict[str, list[float]] = {name: [] for name in routes}
    for _ in range(repeats):
        for name, route in routes.items():
            out[name].append(route())
    return out


def show(title: str, values: dict[str, list[float]], unit: str, scale: float = 1.0) -> None:
    print(title)
    for name, v in values.items():
        print(f"  {name:>6}: {min(v) * scale:9.2f} / {median(v) * scale:9.2f} / "
              f"{max(v) * scale:9.2f} {unit} (min / median / max, {len(v)} runs)")
    names = list(values)
    if len(names) == 2 and median(values[names[1]]) > 0.01 * median(values[names[0]]):
        print(f"  ratio {names[0]} / {names[1]} (medians): "
              f"{median(values[names[0]]) / median(values[names[1]]):.2f}")


def bench_solve(repeats: int) -> None:
    cases = systems(2000)
    same = all(np.array_equal(old_solve(*c), new_solve(*c)) for c in cases)

    def timed(solve: Callable[..., np.ndarray]) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            for case in cases:
                solve(*case)
            return (time.perf_counter() - start) / len(cases)
        return run

    show(f"one 32 x 32 IRLS system ({len(cases)} systems per run; bits identical: {same})",
         alternate({"scipy": timed(old_solve), "posv": timed(new_solve)}, repeats), "us", 1e6)


def bench_irls(repeats: int) -> None:
    rng = np.random.default_rng(1)
    problems = [(rng.normal(size=(45, 32)), rng.normal(size=(45, 2)), rng.normal(size=(32, 2)))
                for _ in range(100)]
    same = all(np.array_equal(plain_irls(X, Z, 1.0, W0)[0], maths.irls_weights(X, Z, 1.0, W0)[0])
               for X, Z, W0 in problems)

    def timed(irls: Callable[..., tuple[np.ndarray, int]]) -> Callable[[], float]:
        def run() -> float:
            start, steps = time.perf_counter(), 0
            for X, Z, W0 in problems:
                steps += irls(X, Z, 1.0, W0, tol=0.0, max_iter=20)[1]
            return (time.perf_counter() - start) / steps
        return run

    show(f"one IRLS step (100 problems x 20 steps per run; bits identical: {same})",
         alternate({"plain": timed(plain_irls), "new": timed(maths.irls_weights)}, repeats),
         "us", 1e6)


def bench_deterministic(repeats: int) -> None:
    def child(route: str) -> Callable[[], float]:
        def run() -> float:
            out = subprocess.run([sys.executable, "-c", DETERMINISTIC_CHILD, route],
                                 capture_output=True, text=True, check=True)
            return float(out.stdout)
        return run

    show("first entry into nn.deterministic in a fresh process",
         alternate({"public": child("public"), "eager": child("eager")}, repeats), "CPU-s")


def run_child(route: str, out: str) -> None:
    """One default ``fedsec run s-fedmv`` in this process; prints its CPU seconds as JSON."""
    import resource

    from fedsec.cli.main import main
    from fedsec.protocols.fedmv import sequential

    if route == "old":
        maths.irls_weights = plain_irls
    training = [0.0]
    train = sequential.train_extractors

    def timed_train(*args: object, **kwargs: object) -> object:
        start = time.process_time()
        try:
            return train(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            training[0] += time.process_time() - start

    sequential.train_extractors = timed_train  # type: ignore[assignment]
    sys.argv = ["fedsec", "run", "s-fedmv", "--out", out, "--secret-seed", "0"]
    with open("/dev/null", "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            main()
        except SystemExit:
            pass
        finally:
            sys.stdout = stdout
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime, "training": training[0]}))


def bench_run(pairs: int) -> None:
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    metrics: dict[str, list[object]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(pairs):
            for route in ("old", "new"):
                out = str(Path(tmp) / f"{route}{i}")
                done = subprocess.run([sys.executable, __file__, "--child", route, out],
                                      capture_output=True, text=True, check=True)
                runs[route].append(json.loads(done.stdout.strip().splitlines()[-1]))
                metrics[route].append(json.loads((Path(out) / "result.json").read_text())
                                      ["metrics"])
    same = all(m == metrics["old"][0] for m in metrics["old"] + metrics["new"])
    show(f"default `fedsec run s-fedmv --secret-seed 0` (metrics identical: {same})",
         {route: [r["cpu"] for r in rs] for route, rs in runs.items()}, "CPU-s")
    training = [r["training"] for rs in runs.values() for r in rs]
    best = median(r["cpu"] for r in runs["new"])
    print(f"  of which the GRU extractors' training (the floor): {min(training):.1f} / "
          f"{median(training):.1f} / {max(training):.1f} CPU-s")
    print(f"  goal <= {GOAL_CPU_SECONDS:.0f} CPU-s: new median {best:.1f} "
          f"({best / GOAL_CPU_SECONDS:.2f} of the goal)")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        run_child(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument("--skip-run", action="store_true")
    args = parser.parse_args()
    bench_solve(args.repeats)
    bench_irls(args.repeats)
    bench_deterministic(min(args.repeats, 3))
    if not args.skip_run:
        bench_run(args.pairs)


if __name__ == "__main__":
    main()
