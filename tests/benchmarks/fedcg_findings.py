"""What each attack recovers from FedCG, per threat model and defence (a plain script).

Run: ``python tests/benchmarks/fedcg_findings.py [--dataset ionosphere] [--seed 0] [--seeds 1]``.
Prints one row per (protocol, defence, adversary, attack) with the leakage
metrics next to their baselines and the model's test accuracy, the numbers
the README's findings table quotes; with ``--seeds N`` each is the mean over N seeds with
the half-width of its 95% interval.
"""

from __future__ import annotations

import argparse

from fedsec.errors import CapabilityError
from fedsec.registry import create
from fedsec.report.aggregate import mean_ci
from fedsec.runner import RunConfig, run
from fedsec.views import build_view

CASES = [
    # protocol, defences, protocol parameters, adversary, attack, scorer
    ("fedcg-naive", [], {}, "server", "multilateration", "point-recovery"),
    ("fedcg-naive", [("random-landmarks", {"method": "U"})], {}, "server", "multilateration",
     "point-recovery"),
    ("fedcg-naive", [("random-landmarks", {"method": "N"})], {}, "server", "multilateration",
     "point-recovery"),
    ("fedcg-naive", [("random-landmarks", {"method": "U"}),
                     ("random-kernel-width", {"jitter": 1.0})], {}, "server", "multilateration",
     "point-recovery"),
    ("fedcg-naive", [("random-landmarks", {"method": "U"})], {"server_knows_seed": False},
     "server", "multilateration", "point-recovery"),
    ("fedcg-naive", [("random-landmarks", {"method": "U"}), ("few-landmarks", {"m": 5})], {},
     "server", "multilateration", "point-recovery"),
    ("fedcg-secure", [("random-landmarks", {"method": "U"})], {}, "centre2", "multilateration",
     "point-recovery"),
    ("fedcg-secure", [("random-landmarks", {"method": "U"})], {}, "hospital1",
     "multilateration", "point-recovery"),
    ("fedcg-secure", [], {}, "server", "gram-inference", "reconstruction-error"),
]


def describe(defenses: list, params: dict) -> str:
    parts = [f"{n}:" + ",".join(f"{k}={v}" for k, v in p.items()) for n, p in defenses]
    parts += [f"{k}={v}" for k, v in params.items()]
    return " ".join(parts) or "none (P landmarks)"


def measure(case: tuple, seed: int, args: argparse.Namespace) -> dict[str, float] | str:
    """One case on one seed: its scores and the model's accuracy, or why there are none."""
    protocol, defenses, params, adversary, attack, scorer = case
    result = run(RunConfig(protocol=protocol, dataset=args.dataset, seed=seed, secret_seed=seed,
                           partition=args.partition, defenses=defenses, params=params,
                           reference=False))
    view = build_view(result.transcript, adversary, result.private)
    try:
        reconstruction = create("attack", attack).run(view)
    except CapabilityError as error:
        return f"not applicable: {error}"
    scores = create("scorer", scorer).score(reconstruction, result.private)
    accuracy = float(result.outcome.metrics["accuracy"])
    if not scores["n_targets"]:
        blocks = reconstruction.info.get("blocks_seen", 0)
        return f"nothing recovered ({blocks} blocks seen); accuracy {accuracy:.3f}"
    main_metric = "point_error" if scorer == "point-recovery" else "relative_error"
    return {"main": scores[main_metric], "baseline": scores["baseline_" + main_metric],
            "recovered": scores["fraction_recovered"],
            "baseline_recovered": scores["baseline_fraction_recovered"],
            "advantage": scores["advantage"], "accuracy": accuracy}


def cell(values: list[float]) -> str:
    """One value, or the mean ± the half-width of its 95% interval over seeds (the audit
    report's :func:`~fedsec.report.aggregate.mean_ci`).

    >>> cell([0.5]), cell([0.4, 0.6])
    ('0.5', '0.5 ± 0.196')
    """
    summary = mean_ci(values)
    if summary["ci"] is None:
        return f"{values[0]:.3g}"
    low, high = summary["ci"]
    return f"{summary['mean']:.3g} ± {(high - low) / 2:.3g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="ionosphere")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=1,
                        help="seeds --seed, --seed + 1, ...: means with 95%% intervals")
    parser.add_argument("--partition", default=None)
    args = parser.parse_args()
    print("| protocol | defence | adversary | attack | main error (baseline) | recovered "
          "within 0.05 (baseline) | advantage | test accuracy |")
    print("|---|---|---|---|---:|---:|---:|---:|")
    for case in CASES:
        protocol, defenses, params, adversary, attack, _ = case
        head = f"| {protocol} | {describe(defenses, params)} | {adversary} | {attack} | "
        found = [measure(case, seed, args) for seed in range(args.seed, args.seed + args.seeds)]
        runs = [f for f in found if isinstance(f, dict)]
        if not runs:
            every = (f" (each of {len(found)} seeds; seed {args.seed} shown)"
                     if len(found) > 1 else "")
            print(f"{head}{found[0]}{every} | | | |")
            continue
        if len(runs) < len(found):  # say why the others measured nothing
            why = next(f for f in found if isinstance(f, str))
            head += f"({len(found) - len(runs)} of {len(found)} seeds: {why}) "

        def of(key: str, rows: list[dict[str, float]] = runs) -> str:
            return cell([r[key] for r in rows])

        print(f"{head}{of('main')} ({of('baseline')}) | {of('recovered')} "
              f"({of('baseline_recovered')}) | {of('advantage')} | {of('accuracy')} |",
              flush=True)


if __name__ == "__main__":
    main()
