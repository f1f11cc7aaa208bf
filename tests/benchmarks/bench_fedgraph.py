"""Hybrid FedGraph at the paper's shape: wall time and peak memory; the privacy score's cost.

Run: ``python tests/benchmarks/bench_fedgraph.py [--parties 50] [--dataset mnist5k]
[--repeat 3]``.

1. The whole protocol (50 clients, each with a random 10% of the pixels and every training
   row, as the paper's experiment; CRC, the offline comparison off, no reference) on
   mnist5k, each run in a fresh process: wall time and the process's peak resident memory.
   The paper gives no timing to compare with; the figures go to the note.
2. The privacy score of one depth on 20 samples (the protocol's setting: 50 alternating
   steps), for a trained 5 x 256 client MLP on 78 pixels, at every depth: goal under 10 s.
   Medians over ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from statistics import median

import numpy as np

WHOLE = """
import json, resource, sys, time
from fedsec.runner import RunConfig, run
started = time.perf_counter()
result = run(RunConfig(secret_seed=0, protocol="fedgraph", dataset=sys.argv[1], reference=False,
                       partition=f"random:parties={sys.argv[2]},features=0.1",
                       params={"compare": False}))
wall = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": wall, "peak_mb": peak,
                  "accuracy": result.outcome.metrics["accuracy"],
                  "local_accuracy": result.outcome.metrics["local_accuracy"],
                  "depth_mean": result.outcome.metrics["depth_mean"],
                  "messages": len(result.transcript.messages)}))
"""


def whole(dataset: str, parties: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", WHOLE, dataset, str(parties)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def score_times(repeat: int) -> dict[int, float]:
    from fedsec import nn
    from fedsec.data import load_spec
    from fedsec.protocols.fedgraph import models
    from fedsec.protocols.fedgraph.privacy_score import ScoreSettings, diameter_score
    from fedsec.protocols.fedgraph.setup import FedGraphParams, scale_inputs

    p = FedGraphParams()
    data = load_spec("fashion_mnist_1k")
    rng = np.random.default_rng(0)
    columns = np.sort(rng.choice(data.n_features, 78, replace=False))
    X = scale_inputs(data.X[:, columns], "pixels")
    times: dict[int, list[float]] = {}
    with nn.deterministic(0):
        model = models.build_mlp(len(columns), p.hidden, p.layers, 10, 0)
        models.fit(model, X, np.asarray(data.y, dtype=np.int64), p.local, 0)
        for _ in range(repeat):
            for depth in range(1, p.layers + 1):
                started = time.perf_counter()
                diameter_score(model, X[:20], depth, ScoreSettings(), rng)
                times.setdefault(depth, []).append(time.perf_counter() - started)
    return {depth: median(t) for depth, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parties", type=int, default=50)
    parser.add_argument("--dataset", default="mnist5k")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"1. fedgraph, {args.parties} clients on {args.dataset} (fresh process per run)")
    runs = []
    for i in range(args.repeat):
        runs.append(whole(args.dataset, args.parties))
        print(f"   run {i + 1}: {json.dumps(runs[-1])}", flush=True)
    print(f"   median wall {median(r['wall'] for r in runs):.1f} s, "
          f"median peak RSS {median(r['peak_mb'] for r in runs):.0f} MB")
    print("2. privacy score, one depth, 20 samples (goal: under 10 s)")
    for depth, seconds in score_times(args.repeat).items():
        print(f"   depth {depth}: {seconds:.2f} s "
              f"({'meets' if seconds < 10 else 'misses'} the goal)")


if __name__ == "__main__":
    main()
