"""NRI-DC speed (a plain script): the collaboration functions, and one whole run.

Run: ``python tests/benchmarks/bench_nri_dc.py [--repeat 7] [--seeds 5]``. The
anchor images ``A_i`` come from real Pima runs (13 workers x 50, anchor of
2000 rows, ``m_tilde = 6``). Prints the median time of each collaboration
function over ``--repeat`` calls and ``--seeds`` runs (they run with one BLAS
thread, see :func:`protocols.collaboration_functions.single_blas_thread`),
next to the paper's Table 4 (seconds, MATLAB/Manopt for RDP). Goals: OPP for
13 workers under 50 ms; RDP within 20x of OPP (the paper: about 300x).
"""

from __future__ import annotations

import argparse
import time
from statistics import median

import numpy as np

from fedsec.protocols.nri_dc import collaboration as cf
from fedsec.protocols.nri_dc import tags
from fedsec.runner import RunConfig, run

PAPER_SECONDS = {"ls": 0.033, "gep": 0.007, "opp": 0.025, "gopp": 0.038, "rdp-ls": 7.886,
                 "rdp-opp": 10.356}
CALLS = {
    "ls": lambda A, d: cf.least_squares(A, d),
    "gep": lambda A, d: cf.generalized_eigen(A, d),
    "opp": lambda A, d: cf.orthogonal_procrustes(A, d),
    "gopp": lambda A, d: cf.generalized_procrustes(A, d, tol=1e-8, max_iterations=500),
    "rdp-ls": lambda A, d: cf.rank_deficiency_penalty(A, d, init="ls", tol=1e-8),
    "rdp-opp": lambda A, d: cf.rank_deficiency_penalty(A, d, init="opp", tol=1e-8),
}


def pima_anchor_images(seed: int) -> list[np.ndarray]:
    result = run(RunConfig(protocol="nri-dc", dataset="pima", seed=seed,
                           secret_seed=seed, scaling="standard",
                           partition="horizontal:parties=13,size=50", test_size=0.1302,
                           reference=False))
    return [np.asarray(m.payload) for m in result.transcript.messages
            if m.tag == tags.ANCHOR_REPRESENTATION]


def timings(images: list[list[np.ndarray]], repeat: int) -> dict[str, float]:
    out = {}
    for name, call in CALLS.items():
        times = []
        for anchors in images:
            call(anchors, 6)  # warm
            for _ in range(repeat):
                start = time.perf_counter()
                call(anchors, 6)
                times.append(time.perf_counter() - start)
        out[name] = median(times)
    return out


def report(label: str, seconds: dict[str, float]) -> None:
    print(f"\n{label}")
    print(f"{'method':8} {'ms':>9} {'x OPP':>7} {'paper s':>8} {'paper x OPP':>12}")
    for name, value in seconds.items():
        paper = PAPER_SECONDS[name]
        print(f"{name:8} {1000 * value:9.2f} {value / seconds['opp']:7.1f} {paper:8.3f} "
              f"{paper / PAPER_SECONDS['opp']:12.1f}")
    rdp = max(seconds["rdp-ls"], seconds["rdp-opp"]) / seconds["opp"]
    print(f"OPP {1000 * seconds['opp']:.2f} ms (goal < 50 ms); slower RDP start "
          f"{rdp:.1f}x OPP (goal <= 20x; paper ~{PAPER_SECONDS['rdp-opp'] / 0.025:.0f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    images = [pima_anchor_images(seed) for seed in range(args.seeds)]
    report(f"Pima, 13 workers, anchor 2000 x 8, m_tilde 6 (median over {args.seeds} runs x "
           f"{args.repeat} calls)", timings(images, args.repeat))
    config = RunConfig(secret_seed=0, protocol="nri-dc", dataset="pima", scaling="standard",
                       partition="horizontal:parties=13,size=50", test_size=0.1302)
    run(config)
    start = time.perf_counter()
    run(config)
    print(f"\nwhole Pima run (13 workers, OPP, logistic regression, with the central "
          f"reference): {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
