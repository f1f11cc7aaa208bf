"""Alternating Descent's error distribution over seeds, and what random restarts add
(plain script).

Run: ``python tests/benchmarks/alternating_descent_seeds.py [--seeds 20] [--landmarks 5]
[--restarts 4] [--sweeps 500]``.

Iris, min-max scaled (4 features), ``--landmarks`` P landmarks (data rows, drawn per seed)
and 100 other rows as the hidden points: the distance block ``D_X`` is completed from
``D_XW`` and ``D_W`` (the attack's structure). With 5 landmarks in four dimensions the points
are exactly determined (multilateration recovers them), so any error is the solver's. Each
seed runs from the shortest-path start (the default) and from ``--restarts`` random starts;
the best of them by s-stress is kept. Prints the relative error on ``D_X`` (quartiles, worst)
and how many seeds end above 5%, with 0 and with ``--restarts`` restarts.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fedsec.data import load_spec
from fedsec.geometry.completers.alternating_descent import alternating_descent
from fedsec.geometry.edm import assemble_edm, squared_distances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--landmarks", type=int, default=5)
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--sweeps", type=int, default=500)
    args = parser.parse_args()
    iris = load_spec("iris")
    X = (iris.X - iris.X.min(axis=0)) / (iris.X.max(axis=0) - iris.X.min(axis=0))
    errors: dict[int, list[float]] = {0: [], args.restarts: []}
    started = time.perf_counter()
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        chosen = rng.choice(len(X), args.landmarks, replace=False)
        W, P = X[chosen], np.delete(X, chosen, axis=0)[:100]
        D, mask = assemble_edm(None, squared_distances(P, W), squared_distances(W))
        truth, n = squared_distances(P), len(P)
        runs = [alternating_descent(D, mask, X.shape[1], rng=np.random.default_rng(seed),
                                    max_iter=args.sweeps)]
        starts = np.random.default_rng([seed, 1])
        runs += [alternating_descent(D, mask, X.shape[1], rng=starts, init="random",
                                     max_iter=args.sweeps) for _ in range(args.restarts)]
        stress = [float(np.sum((r[mask] - D[mask]) ** 2)) for r in runs]
        for restarts in errors:
            best = runs[int(np.argmin(stress[:restarts + 1]))]
            errors[restarts].append(float(np.linalg.norm(best[:n, :n] - truth)
                                          / np.linalg.norm(truth)))
    print(f"iris, {args.landmarks} P landmarks, 100 hidden points, {args.seeds} seeds, "
          f"{args.sweeps} sweeps at most ({time.perf_counter() - started:.0f} s)")
    for restarts, values in errors.items():
        v = np.array(values)
        q = np.percentile(v, [25, 50, 75])
        print(f"restarts {restarts}: relative error on D_X quartiles {q[0]:.4f} / {q[1]:.4f} / "
              f"{q[2]:.4f}, worst {v.max():.4f}, above 5% in {(v > 0.05).sum()} of "
              f"{len(v)} seeds")


if __name__ == "__main__":
    main()
