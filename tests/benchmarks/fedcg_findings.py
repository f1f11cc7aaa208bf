"""What each attack recovers from FedCG, per threat model and defence (a plain script).

Run: ``python tests/benchmarks/fedcg_findings.py [--dataset ionosphere] [--seed 0]``.
Prints one row per (protocol, defence, adversary, attack) with the leakage
metrics next to their baselines and the model's test accuracy, the numbers
the README's findings table quotes.
"""

from __future__ import annotations

import argparse

from fedsec.errors import CapabilityError
from fedsec.registry import create
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="ionosphere")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--partition", default=None)
    args = parser.parse_args()
    print("| protocol | defence | adversary | attack | main error (baseline) | recovered "
          "within 0.05 (baseline) | advantage | test accuracy |")
    print("|---|---|---|---|---:|---:|---:|---:|")
    for protocol, defenses, params, adversary, attack, scorer in CASES:
        result = run(RunConfig(protocol=protocol, dataset=args.dataset, seed=args.seed,
                               secret_seed=args.seed,
                               partition=args.partition, defenses=defenses, params=params,
                               reference=False))
        view = build_view(result.transcript, adversary, result.private)
        try:
            reconstruction = create("attack", attack).run(view)
        except CapabilityError as error:
            print(f"| {protocol} | {describe(defenses, params)} | {adversary} | {attack} | "
                  f"not applicable: {error} | | | |")
            continue
        scores = create("scorer", scorer).score(reconstruction, result.private)
        main_metric = "point_error" if scorer == "point-recovery" else "relative_error"
        accuracy = result.outcome.metrics["accuracy"]
        if not scores["n_targets"]:
            print(f"| {protocol} | {describe(defenses, params)} | {adversary} | {attack} | "
                  f"nothing recovered ({reconstruction.info.get('blocks_seen', 0)} blocks seen) "
                  f"| 0 | 0 | {accuracy:.3f} |")
            continue
        print(f"| {protocol} | {describe(defenses, params)} | {adversary} | {attack} | "
              f"{main_metric} {scores[main_metric]:.3g} ({scores['baseline_' + main_metric]:.3g}) "
              f"| {scores['fraction_recovered']:.2f} ({scores['baseline_fraction_recovered']:.2f})"
              f" | {scores['advantage']:.3f} | {accuracy:.3f} |")


if __name__ == "__main__":
    main()
