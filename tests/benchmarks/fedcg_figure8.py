"""FedCG's Figure 8: relative error on the hidden block D_X versus m (a plain script).

Run: ``python tests/benchmarks/fedcg_figure8.py [--n 100] [--ms 5,10,20,50]
[--max-iter 100] [--methods ...] [--sdr-solver burer-monteiro]``. For Iris,
Ionosphere and Sonar (min-max scaled, ``n`` training points), landmarks by P,
U and N, the RBF kernel with scikit-learn's ``gamma="scale"``: the attacker
knows the kernel block and the landmark distances ``D_W`` (the paper's
setting), hides ``D_X`` and completes it with each of the paper's algorithms,
next to the Nyström formula and
multilateration with the landmarks known. Prints one table per dataset and
landmark method (rows: m; columns: algorithms; cells: relative error on
``D_X``, 1.0 being the error of guessing zero).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fedsec.attacks.fedcg.edm_completion import complete_hidden_block
from fedsec.attacks.fedcg.multilateration import kernel_distances, multilaterate
from fedsec.data import load
from fedsec.geometry.completion import METHODS
from fedsec.geometry.edm import edm
from fedsec.protocols.fedcg import krls
from fedsec.seeding import generator


def relative_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    return float(np.linalg.norm(estimate - truth) / np.linalg.norm(truth))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--ms", default="5,10,20,50")
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--datasets", default="iris,ionosphere,sonar")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sdr-solver", default="SCS",
                        help="solver of the sdr method: burer-monteiro, SCS or CLARABEL")
    args = parser.parse_args()
    methods = [m for m in args.methods.split(",") if m]
    columns = ["multilateration", "nystrom", *methods]
    for name in args.datasets.split(","):
        data = load(name).split(test_size=0.25, rng=args.seed).scaled("minmax").train
        rng = generator(args.seed, f"figure8/{name}")
        X = data.X[rng.choice(data.n_samples, size=min(args.n, data.n_samples), replace=False)]
        d = X.shape[1]
        gamma = krls.scale_gamma(float(X.sum()), float((X**2).sum()), X.size, d)
        D_X = edm(X)
        for method in ("P", "U", "N"):
            print(f"\n{name} (n={len(X)}, d={d}), landmarks {method}: relative error on D_X")
            print("  m  " + "".join(f"{c:>21}" for c in columns))
            for m in (int(v) for v in args.ms.split(",")):
                W, rows = krls.make_landmarks(method, m, d, rng, mean=X.mean(0), std=X.std(0),
                                              pool_size=len(X))
                W = X[rows] if rows is not None else W
                K = krls.rbf_block(X, W, gamma)
                D_XW = kernel_distances(K, gamma)
                D_W = edm(W)
                cells = []
                for column in columns:
                    start = time.perf_counter()
                    if column == "multilateration":
                        X_hat = multilaterate(D_XW, W)
                        error = (relative_error(edm(X_hat), D_X) if np.isfinite(X_hat).all()
                                 else float("nan"))
                    else:
                        options = {"solver": args.sdr_solver} if column == "sdr" else {}
                        estimate = complete_hidden_block(D_XW, D_W, d, column, rng=rng,
                                                         max_iter=args.max_iter, options=options)
                        error = relative_error(estimate, D_X)
                    cells.append(f"{error:9.2e} ({time.perf_counter() - start:5.1f}s)")
                print(f"{m:4d} " + "".join(f"{c:>21}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
