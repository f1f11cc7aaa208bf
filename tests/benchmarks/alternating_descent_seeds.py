"""Alternating Descent's error distribution over seeds, its time, and what random restarts add
(plain script).

Run: ``python tests/benchmarks/alternating_descent_seeds.py [--dataset iris] [--landmarks 5]
[--method P] [--seeds 20] [--restarts 4] [--sweeps 500] [--init shortest-path]``.

The dataset, min-max scaled, ``--landmarks`` landmarks drawn per seed (``P``: data rows;
``U``: uniform on the unit box, as FedCG draws them) and 100 other rows as the hidden points:
the distance block ``D_X`` is completed from ``D_XW`` and ``D_W`` (the attack's structure). Once
the landmarks number more than the features (Iris: 5) the points are exactly determined
(multilateration recovers them), so any error is the solver's. Each seed runs from ``--init``
and, with ``--restarts`` above 0, from that many random starts as well; the best of them by
s-stress is kept. Prints the relative error on ``D_X`` (quartiles, worst), how many seeds end
above 5%, the sweeps used (the solver stops when a sweep gains less than its ``tol``) and the
seconds per seed (quartiles), with 0 and with ``--restarts`` restarts.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fedsec.data import load_spec
from fedsec.geometry.completers.alternating_descent import INITS, alternating_descent
from fedsec.geometry.edm import assemble_edm, squared_distances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="iris")
    parser.add_argument("--landmarks", type=int, default=5)
    parser.add_argument("--method", choices=("P", "U"), default="P")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--sweeps", type=int, default=500)
    parser.add_argument("--init", choices=INITS, default=INITS[0])
    args = parser.parse_args()
    data = load_spec(args.dataset)
    span = data.X.max(axis=0) - data.X.min(axis=0)
    X = (data.X - data.X.min(axis=0)) / np.where(span > 0, span, 1.0)
    errors: dict[int, list[float]] = {0: [], args.restarts: []}
    sweeps: list[int] = []
    seconds: list[float] = []
    counted: list[int] = []  # the sweeps of the current run
    started = time.perf_counter()
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        if args.method == "P":
            chosen = rng.choice(len(X), args.landmarks, replace=False)
            W, P = X[chosen], np.delete(X, chosen, axis=0)[:100]
        else:
            W, P = rng.uniform(size=(args.landmarks, X.shape[1])), X[rng.permutation(len(X))[:100]]
        D, mask = assemble_edm(None, squared_distances(P, W), squared_distances(W))
        truth, n = squared_distances(P), len(P)
        counted.clear()
        begun = time.perf_counter()
        runs = [alternating_descent(D, mask, X.shape[1], rng=np.random.default_rng(seed),
                                    max_iter=args.sweeps, init=args.init,
                                    progress=lambda sweep, _: counted.append(sweep))]
        seconds.append(time.perf_counter() - begun)
        sweeps.append(counted[-1] if counted else 0)
        starts = np.random.default_rng([seed, 1])
        runs += [alternating_descent(D, mask, X.shape[1], rng=starts, init="random",
                                     max_iter=args.sweeps) for _ in range(args.restarts)]
        stress = [float(np.sum((r[mask] - D[mask]) ** 2)) for r in runs]
        for restarts in errors:
            best = runs[int(np.argmin(stress[:restarts + 1]))]
            errors[restarts].append(float(np.linalg.norm(best[:n, :n] - truth)
                                          / np.linalg.norm(truth)))
    print(f"{args.dataset}, {args.landmarks} {args.method} landmarks, 100 hidden points, "
          f"{args.seeds} seeds, init {args.init}, {args.sweeps} sweeps at most "
          f"({time.perf_counter() - started:.0f} s in all)")
    s, t = np.array(sweeps), np.percentile(seconds, [25, 50, 75])
    print(f"one run from {args.init}: sweeps used median {np.median(s):.0f} (range {s.min()}-"
          f"{s.max()}), seconds per seed quartiles {t[0]:.2f} / {t[1]:.2f} / {t[2]:.2f}")
    for restarts, values in errors.items():
        v = np.array(values)
        q = np.percentile(v, [25, 50, 75])
        print(f"restarts {restarts}: relative error on D_X quartiles {q[0]:.2g} / {q[1]:.2g} / "
              f"{q[2]:.2g}, worst {v.max():.2g}, above 5% in {(v > 0.05).sum()} of "
              f"{len(v)} seeds")


if __name__ == "__main__":
    main()
