"""NRI-DC's Table 1 (and 5): test ROC-AUC of the collaboration functions (plain script).

Run: ``python tests/benchmarks/nri_dc_table1.py [--seeds 20] [--datasets pima,heart]
[--model logistic] [--sweep]`` (``--datasets ""`` with ``--sweep`` runs the sweep only).

Pima as in the paper: 13 workers x 50 samples, 100 test samples, standardised
features, logistic regression; one seeded split and partition per seed. The
Cleveland heart set shipped here has 297 complete rows (the paper used a
1,025-row version with one-hot encoded categories), so it runs 3 workers x 50
with 100 test rows on its 13 raw features. Prints, per method, mean ± std and
the median of the workers' mean ROC-AUC next to the paper's value, and the
mean time of the collaboration function. LS and GEP are shown as the paper
computes them (``rescale=False``: the collaborative representation is about
``1/sqrt(r)`` of the data's size and logistic regression predicts one class
on the anchor) and with the common rescaling this package applies by default.

``--sweep`` adds, on Pima with OPP, how accuracy, the pseudoinverse attack
(worker + master: relative set error of each row against its own record; rows
re-identified as the nearest of the victim's records, as the nearest of every
worker's records, as the nearest of the victim's records mixed with the 100 held-out
test records (an auxiliary population), and by optimal assignment among the victim's records, each
next to what a random projection of the same rank reaches by the same rule;
the label linked to each record) and the epsilon-DR check trade against
``m_tilde``, and the cost of the epsilon-DR down-sampling defence.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from typing import Any

import numpy as np

from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run
from fedsec.views import build_view

#: The paper's mean ROC-AUC (Tables 1-3 for Pima, 5-7 for heart disease), by model.
COLUMNS = ("central", "local", "ls (paper)", "gep (paper)", "opp", "gopp", "rdp-ls", "rdp-opp")
PAPER = {
    ("pima", "logistic"): (0.835, 0.791, 0.536, 0.5, 0.820, 0.821, 0.817, 0.816),
    ("pima", "mlp"): (0.836, 0.778, 0.820, 0.799, 0.825, 0.826, 0.827, 0.825),
    ("pima", "random-forest"): (0.824, 0.777, 0.805, 0.742, 0.804, 0.805, 0.806, 0.803),
    ("heart", "logistic"): (0.936, 0.880, 0.872, 0.760, 0.924, 0.923, 0.907, 0.908),
    ("heart", "mlp"): (0.996, 0.884, 0.912, 0.875, 0.940, 0.940, 0.925, 0.926),
    ("heart", "random-forest"): (1.0, 0.889, 0.891, 0.815, 0.892, 0.892, 0.885, 0.884),
}
SETTINGS = {
    "pima": {"partition": "horizontal:parties=13,size=50", "test_size": 0.1302},
    "heart": {"partition": "horizontal:parties=3,size=50", "test_size": 0.3367},
}
METHODS: dict[str, dict[str, Any]] = {
    "ls (paper)": {"collab": "ls", "rescale": False},
    "ls": {"collab": "ls"},
    "gep (paper)": {"collab": "gep", "rescale": False},
    "gep": {"collab": "gep"},
    "opp": {"collab": "opp"},
    "gopp": {"collab": "gopp"},
    "rdp-ls": {"collab": "rdp", "rdp_init": "ls"},
    "rdp-opp": {"collab": "rdp", "rdp_init": "opp"},
}


def config(dataset: str, seed: int, model: str, *, reference: bool = True,
           **params: Any) -> RunConfig:
    return RunConfig(protocol="nri-dc", dataset=dataset, seed=seed, secret_seed=seed,
                     scaling="standard", params={"model": model, **params}, reference=reference,
                     **SETTINGS[dataset])


def table(dataset: str, seeds: int, model: str) -> None:
    auc: dict[str, list[float]] = {"central": [], "local": [], **{m: [] for m in METHODS}}
    seconds: dict[str, list[float]] = {m: [] for m in METHODS}
    start = time.perf_counter()
    for seed in range(seeds):
        for name, params in METHODS.items():
            result = run(config(dataset, seed, model, reference=name == "opp", **params))
            metrics = result.outcome.metrics
            auc[name].append(metrics["roc_auc"])
            seconds[name].append(metrics["collab_seconds"])
            if name == "opp":
                auc["central"].append(result.reference.metrics["roc_auc"])
                auc["local"].append(metrics["local_roc_auc"])
    print(f"\n{dataset}: {SETTINGS[dataset]['partition']}, 100 test rows, {model}, {seeds} seeds "
          f"({time.perf_counter() - start:.0f} s)")
    print(f"{'':13} {'paper':>6} {'mean':>6} {'std':>6} {'median':>6} {'min':>6} {'max':>6} "
          f"{'collab time':>12}")
    for name, values in auc.items():
        v = np.array(values)
        paper = dict(zip(COLUMNS, PAPER[dataset, model], strict=True)).get(name)
        t = f"{1000 * np.mean(seconds[name]):9.2f} ms" if name in seconds else ""
        print(f"{name:13} {paper if paper is not None else '':>6} {v.mean():6.3f} {v.std():6.3f} "
              f"{np.median(v):6.3f} {v.min():6.3f} {v.max():6.3f} {t:>12}")


def attack_scores(result: RunResult, threat: str = "master,party1") -> dict[str, Any]:
    view = build_view(result.transcript, threat, result.private)
    reconstruction = create("attack", "pinv-reconstruction").run(view)
    rows = create("scorer", "matched-rows").score(reconstruction, result.private)
    everyone = create("scorer", "matched-rows", {"pool": "federation"}).score(
        reconstruction, result.private)
    auxiliary = create("scorer", "matched-rows", {"pool": "auxiliary"}).score(
        reconstruction, result.private)
    assigned = create("scorer", "matched-rows", {"rule": "assignment"}).score(
        reconstruction, result.private)
    dr = create("scorer", "epsilon-dr", {"epsilon": 0.1}).score(reconstruction, result.private)
    return {**rows, "dr_fraction_violating": dr["fraction_violating"],
            "federation_reidentified": everyone["reidentified"],
            "federation_projection": everyone["projection_reidentified"],
            "auxiliary_reidentified": auxiliary["reidentified"],
            "auxiliary_projection": auxiliary["projection_reidentified"],
            "assigned_reidentified": assigned["reidentified"],
            "assigned_projection": assigned["projection_reidentified"]}


def sweep(seeds: int, model: str) -> None:
    print(f"\npima, OPP, {seeds} seeds: accuracy and leakage against m_tilde "
          "(attack: master + party1; epsilon-DR check at epsilon 0.1)")
    print("re-identified (random projection of the same rank): nearest among the victim's 50 "
          "records | nearest among all 650 | nearest among the victim's 50 and 100 held-out | "
          "optimal assignment among the victim's 50")
    print(f"{'m_tilde':>7} {'roc_auc':>8} {'set err':>8} {'victim':>14} {'federation':>14} "
          f"{'auxiliary':>14} {'assignment':>14} {'label':>6} {'DR viol.':>8}")
    for m_tilde in range(1, 9):
        rows = []
        for seed in range(seeds):
            result = run(config("pima", seed, model, reference=False, n_components=m_tilde))
            s = attack_scores(result)
            rows.append((result.outcome.metrics["roc_auc"], s["set_error"], s["reidentified"],
                         s["projection_reidentified"], s["federation_reidentified"],
                         s["federation_projection"], s["auxiliary_reidentified"],
                         s["auxiliary_projection"], s["assigned_reidentified"],
                         s["assigned_projection"], s["label_accuracy"],
                         s["dr_fraction_violating"]))
        r = np.mean(rows, axis=0)
        print(f"{m_tilde:7d} {r[0]:8.3f} {r[1]:8.3f} {f'{r[2]:.3f} ({r[3]:.3f})':>14} "
              f"{f'{r[4]:.3f} ({r[5]:.3f})':>14} {f'{r[6]:.3f} ({r[7]:.3f})':>14} "
              f"{f'{r[8]:.3f} ({r[9]:.3f})':>14} {r[10]:6.3f} {r[11]:8.3f}")
    print("\npima, OPP: epsilon-DR down-sampling (each worker drops samples it would reveal "
          "within epsilon)")
    print(f"{'epsilon':>7} {'dropped':>8} {'roc_auc':>8} {'cost':>7} {'re-id':>6} "
          f"{'random':>6} {'DR pass (attack)':>17}")
    for eps in (0.1, 0.2, 0.3, 0.5):
        rows = []
        for seed in range(seeds):
            undefended = config("pima", seed, model, reference=False)
            plain = run(undefended).outcome.metrics["roc_auc"]
            result = run(replace(undefended, defenses=[("epsilon-dr-downsampling",
                                                        {"epsilon": eps})]))
            s = attack_scores(result)
            rows.append((result.outcome.metrics["dr_fraction_dropped"],
                         result.outcome.metrics["roc_auc"],
                         result.outcome.metrics["roc_auc"] - plain, s["reidentified"],
                         s["projection_reidentified"],
                         float(s["dr_fraction_violating"] == 0.0)))
        r = np.mean(rows, axis=0)
        print(f"{eps:7.2f} {r[0]:8.3f} {r[1]:8.3f} {r[2]:+7.3f} {r[3]:6.3f} {r[4]:6.3f} "
              f"{r[5]:17.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--datasets", default="pima,heart")
    parser.add_argument("--model", default="logistic")
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    for dataset in filter(None, (d.strip() for d in args.datasets.split(","))):
        table(dataset, args.seeds, args.model)
    if args.sweep:
        sweep(args.seeds, args.model)


if __name__ == "__main__":
    main()
