"""SDR completion at a thousand points: the misfit form (SCS) against the low-rank solver.

Run: ``python tests/benchmarks/bench_sdr.py [--repeats 1] [--sizes 400,600,800,1000,1200]
[--attack-rows 1000]``.
The attack's problem (as ``bench_edm.py``): n private points and m = 50
landmarks uniform in [0, 1]^3, ``D_XW`` and ``D_W`` known, ``D_X`` hidden.
For each N = n + m prints, side by side, the time (median of ``--repeats``
whole calls) and relative ``D_X`` error of ``solver="SCS"`` (the misfit form,
tol 1e-4) and ``solver="burer-monteiro"`` (the equality-constrained form,
tol 1e-9), their ratios, and the relative difference between the two
answers. SCS is skipped above the first size where it took more than 60 s.
Goal: N >= 1,000 within 60 s at a smaller error than SCS's at the sizes SCS
reaches. The last column names the solver ``solver="auto"`` (the default) takes at
that size (SCS up to ``AUTO_LIMIT`` points); where it is the low-rank solver, auto is
run too and must give the same answer bit for bit.

``--attack-rows R`` also times the ``edm-completion`` attack with ``method = "sdr"``
and its default solver on one FedCG kernel block of about R private rows (the
``classification`` set, 6 features, one cohort and one feature group, 50 U
landmarks, the server holding the seed), the attack's whole path from the view.
"""

from __future__ import annotations

import argparse
import os
import time
from statistics import median

import numpy as np

from fedsec.geometry import assemble_edm, edm, semidefinite_relaxation, squared_distances
from fedsec.geometry.completers.sdr import AUTO_LIMIT, choose_solver

GOAL_SECONDS = 60.0
GOAL_POINTS = 1000
M, DIM = 50, 3


def problem(n: int, m: int, dim: int, seed: int):
    """The instance of ``bench_edm.py``: points and landmarks uniform in the unit cube."""
    rng = np.random.default_rng(seed)
    X, W = rng.random((n, dim)), rng.random((m, dim))
    D, mask = assemble_edm(None, squared_distances(X, W), squared_distances(W))
    return D, mask, edm(X)


def relative_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    n = truth.shape[0]
    return float(np.linalg.norm(estimate[:n, :n] - truth) / np.linalg.norm(truth))


def run(solver: str, N: int, repeats: int) -> tuple[float, float, np.ndarray, str]:
    D, mask, truth = problem(N - M, M, DIM, seed=0)
    seconds, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = semidefinite_relaxation(D, mask, DIM, rng=np.random.default_rng(0), solver=solver,
                                      max_points=max(N, 2))
        seconds.append(time.perf_counter() - start)
    assert out is not None
    spread = f"{min(seconds):.2f}-{max(seconds):.2f}"
    return median(seconds), relative_error(out, truth), out[: N - M, : N - M], spread


def attack_path(rows: int) -> None:
    """Time the edm-completion attack (method sdr, default solver) on one block of ``rows``."""
    from fedsec.registry import create
    from fedsec.runner import RunConfig
    from fedsec.runner import run as run_protocol
    from fedsec.scoring.points import distance_error
    from fedsec.views import build_view

    samples = int(np.ceil(rows / 0.75))  # the runner keeps 75% for training
    result = run_protocol(RunConfig(secret_seed=0,
        protocol="fedcg-naive", dataset=f"classification:n_samples={samples},n_features=6",
        partition="hybrid:cohorts=1,groups=1", reference=False,
        params={"landmark_method": "U", "n_landmarks": M}))
    view = build_view(result.transcript, "server", result.private)
    start = time.perf_counter()
    reconstruction = create("attack", "edm-completion", {"method": "sdr"}).run(view)
    seconds = time.perf_counter() - start
    for key, estimate in reconstruction.estimates.items():
        truth = result.private[key]
        print(f"attack path: edm-completion, method sdr, default solver "
              f"({reconstruction.info['sdr_solver'][key]}) on {truth.shape[0]} rows + {M} "
              f"landmarks: {seconds:.2f} s, distance error "
              f"{distance_error(estimate, truth):.1e}, convergence "
              f"{reconstruction.info['convergence']['stopped']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--sizes", default="400,600,800,1000,1200")
    parser.add_argument("--attack-rows", type=int, default=0)
    args = parser.parse_args()
    print(f"cpu count {os.cpu_count()}, numpy {np.__version__}; m={M}, d={DIM}, D_X hidden; "
          f"median of {args.repeats} run(s); auto takes SCS up to {AUTO_LIMIT} points")
    print(f"{'N':>5} {'SCS s':>8} {'SCS error':>10} {'BM s':>7} {'BM error':>9} "
          f"{'time ratio':>10} {'error ratio':>11} {'BM vs SCS':>9} {'auto':>14}")
    scs_alive, verdicts, spreads = True, [], []
    for N in (int(v) for v in args.sizes.split(",") if v):
        seconds, error, answer, spread = run("burer-monteiro", N, args.repeats)
        spreads.append(f"N={N}: BM {spread} s")
        auto = choose_solver(N)
        if auto == "burer-monteiro":
            auto_seconds, _, auto_answer, _ = run("auto", N, 1)
            verdicts.append(bool(np.array_equal(auto_answer, answer)))
            auto = f"BM {auto_seconds:.2f} s" + ("" if verdicts[-1] else " DIFFERS")
        if scs_alive:
            scs_seconds, scs_error, scs_answer, scs_spread = run("SCS", N, args.repeats)
            spreads.append(f"N={N}: SCS {scs_spread} s")
            gap = np.linalg.norm(answer - scs_answer) / np.linalg.norm(scs_answer)
            print(f"{N:5d} {scs_seconds:8.2f} {scs_error:10.2e} {seconds:7.2f} {error:9.2e} "
                  f"{seconds / scs_seconds:10.3f} {error / scs_error:11.2e} {gap:9.1e} "
                  f"{auto:>14}")
            verdicts.append(error < scs_error)
            scs_alive = scs_seconds <= GOAL_SECONDS
        else:
            print(f"{N:5d} {'skipped (SCS took > 60 s at a smaller N)':>28} {seconds:7.2f} "
                  f"{error:9.2e} {'':>10} {'':>11} {'':>9} {auto:>14}")
        if N >= GOAL_POINTS:
            verdicts.append(seconds <= GOAL_SECONDS)
            print(f"      N = {N}: {seconds:.2f} s, ratio {seconds / GOAL_SECONDS:.3f} to the "
                  f"{GOAL_SECONDS:.0f} s floor")
    print("range over the repeats:", "; ".join(spreads), flush=True)
    if args.attack_rows:
        attack_path(args.attack_rows)
    print("goal (N >= 1000 within 60 s, error below SCS's wherever SCS ran):",
          "met" if verdicts and all(verdicts) else "NOT met")


if __name__ == "__main__":
    main()
