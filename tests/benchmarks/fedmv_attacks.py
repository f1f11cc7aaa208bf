"""What V-FedMV's server learns, and what it costs (plain script).

Run: ``python tests/benchmarks/fedmv_attacks.py [--views fou+kar+zer] [--repeat 3]``.

On mfeat (2,000 digits, 10 classes, 75/25 split): per view, the round at which the server's
stacked images ``X_k W_k`` reach the view's rank (against ceil(d_k / C)), the fraction of the
view inside the recovered span, known-record alignment's relative error with d_k + 5 and
d_k / 2 known rows, the label holder's reading of the other views, and the same under the
``noise`` backend. Then the timings: ``v-fedmv`` against ``mvl`` for the same iterations
(alternated runs, medians), and the subspace attack on the first 30 rounds. Also: test-phase
inference, binary columns, the nutrimouse control and H-FedMV's average read by the other
client (:func:`extras`).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path
from statistics import median

import numpy as np

from fedsec.private_store import shard_key
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.views import build_view


def attack(result, name: str, threat: str, scorer: str, **params):
    view = build_view(result.transcript, threat, result.private)
    reconstruction = create("attack", name, dict(params)).run(view)
    return reconstruction, create("scorer", scorer).score(reconstruction, result.private)


def extras() -> None:
    """Test-phase inference (mfeat zer + mor), binary columns (heart's artificial views), the
    nutrimouse control, and H-FedMV's average read by the other client."""
    result = run(RunConfig(secret_seed=0, protocol="v-fedmv", dataset="mfeat:views=zer+mor"))
    rng = np.random.default_rng(0)
    known = {}
    for party in ("party1", "party2"):
        X = np.asarray(result.private[shard_key(party, 0, "X")])
        rows = rng.choice(X.shape[0], X.shape[1] + 5, replace=False)
        known.update({f"{party}/rows": rows, f"{party}/X": X[rows]})
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(Path(tmp) / "known.npz", **known)
        _, scores = attack(result, "test-inference", "server", "reconstruction-error",
                           records=str(Path(tmp) / "known.npz"))
    for party, view in (("party1", "zer"), ("party2", "mor")):
        entry = scores["per_target"][f"party/{party}/value/test_X"]
        print(f"  test rows of {view}: error {entry['relative_error']:.2e} (prior "
              f"{entry['baseline_relative_error']:.2f})")
    heart = run(RunConfig(secret_seed=0, protocol="v-fedmv", dataset="heart:views=artificial"))
    _, scores = attack(heart, "binary-columns", "server", "binary-columns")
    print(f"  heart (artificial views): 0/1 columns {scores['binary_columns']:.0f}, recovered "
          f"{scores['recovered']:.2f}, spurious {scores['spurious']:.0f}")
    mouse = run(RunConfig(secret_seed=0, protocol="v-fedmv", dataset="nutrimouse"))
    _, scores = attack(mouse, "subspace-accumulation", "server", "column-space")
    for key, entry in scores["per_target"].items():
        print(f"  nutrimouse {key}: captured {entry['captured']:.6f} (random "
              f"{entry['baseline_captured']:.3f}), rank {entry['true_rank']:.0f}")
    for label, params in (("default tolerance", {}),
                          ("beta 0, tolerance 1e-12", {"beta": 0.0, "tol": 1e-12,
                                                       "max_rounds": 5000})):
        horizontal = run(RunConfig(protocol="h-fedmv", dataset="mfeat:views=zer+mor",
                                   partition="horizontal:parties=2",
                                   params={"rounds": 3, **params}))
        _, scores = attack(horizontal, "average-difference", "party1", "reconstruction-error")
        print(f"  h-fedmv, two clients ({label}): party1 reads party2's weights to "
              f"{scores['relative_error']:.1e} (the average itself: "
              f"{scores['baseline_relative_error']:.2f}); local change "
              f"{horizontal.outcome.metrics['local_change']:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--views", default="fou+kar+zer")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    dataset = f"mfeat:views={args.views}"
    views = args.views.split("+")
    result = run(RunConfig(secret_seed=0, protocol="v-fedmv", dataset=dataset))
    C = result.outcome.values["test_scores"].shape[1]
    print(f"v-fedmv on {dataset}: {result.outcome.metrics['rounds']} rounds, accuracy "
          f"{result.outcome.metrics['accuracy']:.3f}, largest relative difference to mvl "
          f"{result.record.comparison.worst:.2e}")
    spans, scores = attack(result, "subspace-accumulation", "server", "column-space")
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for i, view in enumerate(views, start=1):
            party = f"party{i}"
            key = shard_key(party, 0, "X")
            X = np.asarray(result.private[key])
            ranks = spans.info["rank_by_round"][party]
            rank = scores["per_target"][key]["true_rank"]
            reached = next((r for r, k in enumerate(ranks, start=1) if k >= rank), None)
            errors = []
            for m in (X.shape[1] + 5, X.shape[1] // 2):
                rows = rng.choice(X.shape[0], m, replace=False)
                path = Path(tmp) / f"{party}-{m}.npz"
                np.savez(path, **{f"{party}/rows": rows, f"{party}/X": X[rows]})
                _, aligned = attack(result, "known-record-alignment", "server",
                                    "reconstruction-error", records=str(path))
                errors.append((m, aligned["per_target"][key]["relative_error"]))
            print(f"  {view} (d = {X.shape[1]}, rank {rank:.0f}): full rank at round {reached} "
                  f"(ceil(d/C) = {math.ceil(X.shape[1] / C)}); captured "
                  f"{scores['per_target'][key]['captured']:.12f} (random subspace "
                  f"{scores['per_target'][key]['baseline_captured']:.3f}); leverage error "
                  f"{scores['per_target'][key]['leverage_error']:.1e} (random "
                  f"{scores['per_target'][key]['baseline_leverage_error']:.2f}); same nearest "
                  f"neighbour {scores['per_target'][key]['same_neighbours']:.3f} (random "
                  f"{scores['per_target'][key]['baseline_same_neighbours']:.4f}); known rows "
                  + ", ".join(f"m = {m}: error {e:.2e}" for m, e in errors))
    _, joint = attack(result, "curious-client", "party1", "column-space")
    print(f"  label holder party1 ({views[0]}): captured {joint['captured']:.12f} of the other "
          f"views (random {joint['baseline_captured']:.3f}), advantage {joint['advantage']:.6f}")
    masked = run(RunConfig(secret_seed=0, protocol="v-fedmv", dataset=dataset, backend="noise"))
    view = build_view(masked.transcript, "server", masked.private)
    print(f"  under noise: model agrees with mvl: {masked.record.comparison.agrees} (worst "
          f"{masked.record.comparison.worst:.2e}); server: "
          f"{create('attack', 'subspace-accumulation').not_applicable(view)}")
    _, joint = attack(masked, "curious-client", "party1", "column-space")
    print(f"  under noise, label holder: captured {joint['captured']:.12f} (random "
          f"{joint['baseline_captured']:.3f}), recovered rank {joint['recovered_rank']:.0f}")

    extras()
    times: dict[str, list[float]] = {"v-fedmv": [], "mvl": []}
    rounds = result.outcome.metrics["rounds"]
    for _ in range(args.repeat):
        for protocol in ("v-fedmv", "mvl"):
            start = time.perf_counter()
            run(RunConfig(secret_seed=0, protocol=protocol, dataset=dataset, reference=False))
            times[protocol].append(time.perf_counter() - start)
    v, m = median(times["v-fedmv"]), median(times["mvl"])
    print(f"wall time, {rounds} rounds each: v-fedmv {v:.2f} s, mvl {m:.2f} s: "
          f"{v / m:.2f}x (goal <= 1.5x)")
    view = build_view(result.transcript, "server", result.private)
    first30 = type(view)(threat=view.threat, header=view.header, knowledge=view.knowledge,
                         messages=tuple(msg for msg in view.messages if msg.round <= 30))
    attack_times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        create("attack", "subspace-accumulation").run(first30)
        attack_times.append(time.perf_counter() - start)
    print(f"subspace attack on the first 30 rounds, {len(views)} views: "
          f"{median(attack_times):.2f} s (goal < 1 s)")


if __name__ == "__main__":
    main()
