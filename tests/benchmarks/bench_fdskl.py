"""FDSKL measurements (a plain script): speed, accuracy, attack curves, Figure 4, coalitions.

Run ``python tests/benchmarks/bench_fdskl.py COMMAND`` with COMMAND one of:

* ``speed`` — 10,000 iterations on the 20,000-sample synthetic task (4 features,
  2 informative, 4 workers, one column each): FDSKL (transcript in memory)
  against centralized DSG with the same seed (goal: within 3x), alphas
  compared, and the messages and bytes of one Algorithm-3 sum against the
  analysis (q - 1 for T1, q - 2 for T2 plus one delivery when T2's root is
  not the requester: at most 2(q - 1)).
* ``accuracy`` — test error of FDSKL on breast_cancer (the CLI's default run)
  and on the 20,000-sample task, next to scikit-learn SVC and kernel ridge with
  the same RBF kernel on the same split (goal: within 1 percentage point).
* ``curve`` — linear inference after a full breast_cancer run: error of the
  per-sample regression against the number of messages observed, then the
  shared-offsets estimate, for each offsets mode and adversary.
* ``figure4`` — the paper's Figure 4: summing local linear-kernel matrices
  with the cycle, tree and star structures; messages, bytes, rounds and the
  time under a link model.
* ``coalitions`` — what every coalition of up to ``--size`` workers recovers.
* ``batches`` — test error of FDSKL against SVC with the same kernel, for the same number of
  samples seen (``--iterations``, default 10,000) at batch size 1, 16 and 32, with 1 or 20
  random features per iteration, the step as given or multiplied by the batch size, and the
  width from the "scale" statistics or the median heuristic; breast_cancer over ``--seeds``
  seeds and the 20,000-sample task on seed 0.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fedsec.data import Dataset, load
from fedsec.federation import Federation
from fedsec.network import Network
from fedsec.partition import parse_partition
from fedsec.protocols.fdskl import dsg, exposure, plans, tags, trees
from fedsec.protocols.fdskl import protocol as fdskl
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.seeding import generator
from fedsec.transcript import TranscriptWriter
from fedsec.views import build_view

SYNTHETIC = {"n_samples": 20000, "n_features": 4, "n_informative": 2, "seed": 0}


def split(dataset: Dataset, seed: int = 0) -> tuple[Dataset, Dataset]:
    """The runner's split and scaling."""
    parts = dataset.split(test_size=0.25, rng=generator(seed, "split")).scaled("minmax")
    return parts.train, parts.test


def run_fdskl(train: Dataset, test: Dataset, params: dict, *, seed: int = 0,
              partition: str = "vertical:parties=4") -> tuple[object, object, float]:
    """FDSKL on a dataset object (the runner loads datasets by name only); transcript in memory."""
    spec = parse_partition(partition)
    part = spec.apply(n_samples=train.n_samples, feature_groups=train.feature_groups,
                      y=train.y, rng=generator(seed, "partition"))
    network = Network(TranscriptWriter({"parties": dict(part.roles)}), part.roles)
    federation = Federation.from_partition(part, train, seed=seed, secret_seed=seed,
                                           network=network, test=test)
    start = time.perf_counter()
    outcome = fdskl.FDSKL(**params).run(federation, create("backend", "plain"))
    elapsed = time.perf_counter() - start
    return outcome, network.close(), elapsed


def speed(args: argparse.Namespace) -> None:
    train, test = split(load("classification", **SYNTHETIC))
    params = {"n_iterations": args.iterations}
    t_dsg, t_fed = [], []
    for _ in range(args.repeat):  # alternate, so both see the same machine load
        start = time.perf_counter()
        reference = dsg.reference_outcome(dsg.DSGParams(**params), train, test, 0)
        t_dsg.append(time.perf_counter() - start)
        outcome, transcript, elapsed = run_fdskl(train, test, params)
        t_fed.append(elapsed)
    t_dsg, t_fed = float(np.median(t_dsg)), float(np.median(t_fed))
    gap = np.abs(outcome.values["alpha"] - reference.values["alpha"]).max() / np.abs(
        reference.values["alpha"]).max()
    sums = [m for m in transcript.messages if m.tag in (tags.PARTIAL_DOT, tags.OFFSET_SUM)]
    print(f"{args.iterations} iterations, {train.n_samples} training samples, 4 workers")
    print(f"  median of {args.repeat}: DSG (centralized) {t_dsg:.2f} s; FDSKL {t_fed:.2f} s; "
          f"ratio {t_fed / t_dsg:.2f}x "
          f"(goal <= 3x); max alpha difference {gap:.1e} (relative)")
    print(f"  transcript: {len(transcript)} messages, "
          f"{sum(m.size for m in transcript.messages) / 1e6:.0f} MB; "
          f"{outcome.metrics['n_pairs']} (sample, feature) pairs")
    pairs = outcome.metrics["n_pairs"]
    t1 = [m for m in sums if m.meta["tree"] == "T1"]
    t2 = [m for m in sums if m.meta["tree"] == "T2"]
    print(f"  per pair: T1 {sum(m.size for m in t1) / pairs:.1f} bytes in "
          f"{len({tuple(m.meta['covers']) for m in t1})} messages (analysis q-1 = 3, 8 bytes "
          f"each); T2 {sum(m.size for m in t2) / args.iterations:.1f} bytes per feature "
          "(per-feature offsets: once per feature)")
    plan = plans.build_plan([f"party{i}" for i in range(1, 5)], "party1")
    for excluded in plan.t2:
        call = plan.call(excluded)
        counts = {t: sum(1 for tree, _ in call.messages() if tree == t) for t in ("T1", "T2")}
        print(f"  l'={excluded}: T1 {counts['T1']} + T2 {counts['T2']} messages "
              f"(<= 2(q-1) = 6); T1 depth {trees.rounds(plan.t1)}, T2 depth "
              f"{trees.rounds(plan.t2[excluded])}")


def exact_errors(train: Dataset, test: Dataset, width: float) -> dict[str, float]:
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.svm import SVC

    gamma = 1.0 / (2 * width**2)
    svc = SVC(gamma=gamma).fit(train.X, train.y).score(test.X, test.y)
    out = {"SVC (C=1)": 1.0 - svc}
    if train.n_samples <= 5000:
        ridge = KernelRidge(alpha=0.1, kernel="rbf", gamma=gamma).fit(train.X, 2.0 * train.y - 1)
        out["kernel ridge (alpha=0.1)"] = 1.0 - float(((ridge.predict(test.X) > 0) == test.y)
                                                       .mean())
    return out


def accuracy(args: argparse.Namespace) -> None:
    result = run(RunConfig(protocol="fdskl", dataset="breast_cancer",
                           partition="vertical:parties=4", seed=args.seed, secret_seed=args.seed))
    train, test = split(load("breast_cancer"), args.seed)
    fed = result.outcome.metrics["test_error"]
    print(f"breast_cancer (seed {args.seed}, {result.outcome.metrics['n_iterations']} "
          f"iterations): FDSKL test error {100 * fed:.2f}% (DSG "
          f"{100 * result.reference.metrics['test_error']:.2f}%)")
    for name, err in exact_errors(train, test, result.outcome.metrics["kernel_width"]).items():
        print(f"  {name}: {100 * err:.2f}%  (FDSKL - exact: {100 * (fed - err):+.2f} pp)")
    train, test = split(load("classification", **SYNTHETIC))
    outcome, _, elapsed = run_fdskl(train, test, {"n_iterations": args.iterations})
    fed = outcome.metrics["test_error"]
    print(f"synthetic {SYNTHETIC} ({args.iterations} iterations, {elapsed:.1f} s): FDSKL "
          f"test error {100 * fed:.2f}%")
    for name, err in exact_errors(train, test, outcome.metrics["kernel_width"]).items():
        print(f"  {name}: {100 * err:.2f}%  (FDSKL - exact: {100 * (fed - err):+.2f} pp)")


def _relative(estimate: np.ndarray, truth: np.ndarray, rows: np.ndarray) -> float:
    return float(np.linalg.norm(estimate[rows] - truth[rows]) / np.linalg.norm(truth[rows]))


def curve(args: argparse.Namespace) -> None:
    from fedsec.attacks.fdskl.equations import fdskl_systems
    from fedsec.attacks.linear_systems import solve_rows, solve_shared

    for offsets in ("per-feature", "fresh"):
        result = run(RunConfig(secret_seed=0, protocol="fdskl", dataset="breast_cancer",
                               params={"n_iterations": args.iterations, "offsets": offsets}))
        for threat in ("party1", "party2"):
            view = build_view(result.transcript, threat, result.private)
            systems = {s.label.split()[-1]: s for s in fdskl_systems(view)}
            noisy = systems["per-sample"]
            truth = np.hstack([result.private[k] for k, _, _ in noisy.parts])
            workers = ", ".join(noisy.info["workers"])
            print(f"\noffsets={offsets}, adversary {threat}, target features of {workers} "
                  f"({len(view.messages)} messages observed in all)")
            print("  messages  rows  median eq/row  per-sample rel. error")
            last = int(noisy.order.max()) + 1
            for k in np.unique(np.geomspace(8, last, 9).round().astype(int)).tolist():
                est, _ = solve_rows(noisy, mask=noisy.order < k)
                rows = np.flatnonzero(np.isfinite(est).all(axis=1))
                counts = np.bincount(noisy.rows[noisy.order < k], minlength=noisy.n_rows)
                err = _relative(est, truth, rows) if rows.size else float("nan")
                median = np.median(counts[rows]) if rows.size else 0
                print(f"  {k:8d}  {rows.size:4d}  {median:13.0f}  {err:.4f}")
            shared = systems.get("shared-offsets")
            if shared is None:
                print("  shared offsets: none (every equation has a fresh offset)")
                continue
            sub = np.hstack([result.private[k] for k, _, _ in shared.parts])
            for anchor in ("prior", "minmax"):
                est, info = solve_shared(shared, anchor=anchor)
                rows = np.flatnonzero(np.isfinite(est).all(axis=1))
                gap = est[rows] - sub[rows]
                print(f"  shared offsets ({', '.join(shared.info['workers'])}), anchor={anchor}: "
                      f"rel. error {_relative(est, sub, rows):.2e}, up to a translation "
                      f"{np.linalg.norm(gap - gap.mean(0)) / np.linalg.norm(sub[rows]):.1e} "
                      f"({rows.size} rows, {info['sweeps']} sweeps)")


def figure4(args: argparse.Namespace) -> None:
    train, _ = split(load("breast_cancer"))
    X = train.X[: args.samples]
    n = X.shape[0]
    print(f"sum of local linear-kernel matrices ({n} x {n}, {8 * n * n / 1e6:.1f} MB each); "
          "link model: 1 GB/s, 0.1 ms latency")
    print("    q  structure  messages   MB on wire  rounds  max msgs into one node  "
          "modeled ms")
    for q in (2, 4, 8, 16):
        groups = np.array_split(np.arange(X.shape[1]), q)
        names = [f"w{i}" for i in range(q)]
        local = {w: X[:, g] @ X[:, g].T for w, g in zip(names, groups, strict=True)}
        for kind in trees.KINDS:
            tree = trees.layout(kind, names)
            net = Network(TranscriptWriter({}), {w: "worker" for w in names})
            from fedsec.protocols.fdskl.sums import tree_sum

            total = tree_sum(net, tree, local, "kernel_sum", {})
            transcript = net.close()
            assert np.allclose(total, X @ X.T)
            fan_in = max(sum(1 for e in trees.edges(tree) if e.receiver == w and e.round == r)
                         for w in names for r in range(1, trees.rounds(tree) + 1))
            print(f"  {q:3d}  {kind:9s}  {len(transcript):8d}  "
                  f"{sum(m.size for m in transcript.messages) / 1e6:11.1f}  "
                  f"{trees.rounds(tree):6d}  {fan_in:22d}  "
                  f"{1e3 * trees.modeled_seconds(tree, 8.0 * n * n):10.1f}")


def coalitions(args: argparse.Namespace) -> None:
    for q in (3, 4, 5):
        workers = [f"party{i}" for i in range(1, q + 1)]
        plan = plans.build_plan(workers, "party1")
        print(f"\nq={q}: T1 {trees.as_lists(plan.t1)}")
        for note in plan.refused:
            print(f"  refused: {note}")
        for excluded, t2 in plan.t2.items():
            print(f"  T2 without {excluded}: {trees.as_lists(t2)}")
        for result in exposure.enumerate_coalitions(plan, min(args.size, q - 1)):
            if result.recovered:
                per = "; ".join(f"l'={k}: {', '.join(v)}" for k, v in result.recovered.items())
                print(f"  {'+'.join(result.coalition):24s} recovers {per}")


BATCH_CONFIGS = ((1, 1, 1), (16, 1, 1), (16, 1, 16), (16, 20, 16), (32, 20, 32))
"""(batch_size, features_per_iteration, step multiplier) of the ``batches`` sweep."""


def batches(args: argparse.Namespace) -> None:
    sets = [("breast_cancer", seed, lambda s: split(load("breast_cancer"), s))
            for seed in range(args.seeds)]
    sets.append(("synthetic", 0, lambda s: split(load("classification", **SYNTHETIC), s)))
    print(f"{args.iterations} samples seen; step 0.1 x multiplier; test error in %")
    print("  dataset        seed  width   B   r  step   FDSKL   SVC  (FDSKL - SVC)  width  "
          "pairs       s")
    for name, seed, loader in sets:
        train, test = loader(seed)
        for rule in ("scale", "median"):
            for B, r, mult in BATCH_CONFIGS:
                params = {"n_iterations": args.iterations // B, "batch_size": B,
                          "features_per_iteration": r, "step": 0.1 * mult, "width_rule": rule}
                outcome, _, elapsed = run_fdskl(train, test, params, seed=seed)
                width = outcome.metrics["kernel_width"]
                svc = exact_errors(train, test, width)["SVC (C=1)"]
                fed = outcome.metrics["test_error"]
                print(f"  {name:13s} {seed:5d}  {rule:6s} {B:3d} {r:3d} {0.1 * mult:5.1f}  "
                      f"{100 * fed:6.2f} {100 * svc:5.2f}  {100 * (fed - svc):+13.2f}  "
                      f"{width:5.2f}  {outcome.metrics['n_pairs']:9d}  {elapsed:6.1f}",
                      flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["speed", "accuracy", "curve", "figure4",
                                            "coalitions", "batches"])
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--size", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    defaults = {"speed": 10000, "accuracy": 10000, "curve": 6000, "batches": 10000}
    if args.iterations is None:
        args.iterations = defaults.get(args.command, 0)
    {"speed": speed, "accuracy": accuracy, "curve": curve, "figure4": figure4,
     "coalitions": coalitions, "batches": batches}[args.command](args)


if __name__ == "__main__":
    main()
