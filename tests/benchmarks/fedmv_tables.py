"""FedMV's Tables 1 and 2, as orderings on public data (plain script).

Run: ``python tests/benchmarks/fedmv_tables.py [--seeds 10] [--views fou+kar+zer]``.

The paper's numbers come from private data (BiAffect); what can be reproduced is their
ordering. Table 1 (vertical): all views (``v-fedmv``, equal to ``mvl``) >= every pair of
views (``mvl`` on the pair) >= the best single view (``single-view``, the l2,1 least-squares
baseline). Table 2 (horizontal): ``h-fedmv`` (four clients, 20 rounds) >= each client's MVL on
its own rows (``local_*``). Mean and standard deviation over seeds, each seed its own
stratified 75/25 split and starting point; the protocols' defaults (beta 4, zeta = eta = 1),
no tuning on test data. Accuracy, macro precision, recall and F1.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from fedsec.runner import RunConfig, run

METRICS = ("accuracy", "precision", "recall", "f1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--views", default="fou+kar+zer", help="mfeat views, joined by '+'")
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    views = args.views.split("+")
    rows: dict[str, list[dict[str, float]]] = {}

    def add(label: str, metrics: dict[str, float]) -> None:
        rows.setdefault(label, []).append({m: float(metrics[m]) for m in METRICS})

    started = time.perf_counter()
    for seed in range(args.seeds):
        everything = run(RunConfig(protocol="v-fedmv", dataset=f"mfeat:views={args.views}",
                                   seed=seed, secret_seed=seed))
        assert everything.record.comparison.agrees, everything.record.comparison
        add(f"v-fedmv ({args.views})", everything.outcome.metrics)
        for pair in itertools.combinations(views, 2):
            result = run(RunConfig(protocol="mvl", dataset=f"mfeat:views={'+'.join(pair)}",
                                   seed=seed, secret_seed=seed, reference=False))
            add(f"mvl ({'+'.join(pair)})", result.outcome.metrics)
        for view in views:
            result = run(RunConfig(protocol="single-view", dataset=f"mfeat:views={view}",
                                   seed=seed, secret_seed=seed, reference=False))
            add(f"single-view ({view})", result.outcome.metrics)
        horizontal = run(RunConfig(protocol="h-fedmv", dataset=f"mfeat:views={args.views}",
                                   partition=f"horizontal:parties={args.clients}", seed=seed,
                                   secret_seed=seed, reference=False))
        add(f"h-fedmv ({args.clients} clients)", horizontal.outcome.metrics)
        add("local MVL (mean over clients)", {
            "accuracy": horizontal.outcome.metrics["local_accuracy"],
            "f1": horizontal.outcome.metrics["local_f1"],
            "precision": float("nan"), "recall": float("nan")})
        print(f"seed {seed} done ({time.perf_counter() - started:.0f} s)", flush=True)

    print(f"\nmfeat views {args.views}, {args.seeds} seeds (mean ± std)")
    print(f"{'configuration':32}" + "".join(f"{m:>17}" for m in METRICS))
    for label, entries in rows.items():
        cells = []
        for metric in METRICS:
            values = np.array([e[metric] for e in entries])
            cells.append("-" if np.isnan(values).all() else
                         f"{values.mean():.4f} ± {values.std():.4f}")
        print(f"{label:32}" + "".join(f"{c:>17}" for c in cells))


if __name__ == "__main__":
    main()
