"""What one FedAvg round of S-FedMV costs over the same local training alone (plain script).

Run: ``python tests/benchmarks/sfedmv_round.py [--repeat 3] [--dataset keystrokes]``.

One round's federated cost is the wall time of the protocol's FedAvg stage in a run with one
FedAvg round (no reference, no local baselines, one H-FedMV round): the broadcast, every
client's local epochs, the weighted secure sum and the transcript. The local cost is every
client training its extractors for one round on the same sequences from the same starting
weights, with no federation. The goal: federated within
1.3x of local. Runs alternate and the medians are reported.
"""

from __future__ import annotations

import argparse
import time
from statistics import median

import numpy as np

from fedsec import nn
from fedsec.data import load_spec
from fedsec.data.sequences import sequence_layouts
from fedsec.private_store import parse_truth_key
from fedsec.protocols.fedmv import extractor, tags
from fedsec.protocols.fedmv.sequential import (
    SFedMV,
    SFedMVParams,
    _initial_models,
    load_all,
    sequences,
    train_extractors,
)
from fedsec.runner import RunConfig, run

PARAMS = {"rounds": 1, "local_baselines": False}


def federated(dataset: str) -> tuple[float, object]:
    """The wall time of one FedAvg round inside a run, and the run's result."""
    timings: list[float] = []
    original = SFedMV._fedavg

    def timed(self: SFedMV, *args: object, **kwargs: object) -> object:
        started = time.perf_counter()
        out = original(self, *args, **kwargs)  # type: ignore[arg-type]
        timings.append(time.perf_counter() - started)
        return out

    SFedMV._fedavg = timed  # type: ignore[method-assign, assignment]
    try:
        result = run(RunConfig(protocol="s-fedmv", dataset=dataset, reference=False,
                               params={**PARAMS, "fedavg_rounds": 1}))
    finally:
        SFedMV._fedavg = original  # type: ignore[method-assign]
    return timings[0], result


def local(dataset: str, result: object) -> float:
    """Every client's one round of local epochs on its sequences, no federation."""
    data = load_spec(dataset)
    layouts = sequence_layouts(data)
    p = SFedMVParams(**PARAMS)
    C = data.n_classes
    specs = {v: extractor.ExtractorSpec(len(lay.inputs), p.hidden, C)
             for v, lay in layouts.items()}
    private = result.private  # type: ignore[attr-defined]
    clients = {parse_truth_key(k).party for k in private
               if k.endswith(tags.TRAINED_ROWS)}
    started = time.perf_counter()
    with nn.deterministic(0):
        models = _initial_models(specs, 0)
        start = np.concatenate([nn.flatten(m) for m in models.values()])
        for i, name in enumerate(sorted(clients)):
            X = np.asarray(private[f"party/{name}/value/{tags.TRAINED_ROWS}"])
            y = np.asarray(private[f"party/{name}/value/{tags.TRAINED_LABELS}"])
            load_all(models, start)
            train_extractors(models, sequences(X, data, layouts), y, p.local, i)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dataset", default="keystrokes")
    args = parser.parse_args()
    rounds, alone = [], []
    for _ in range(args.repeat):
        seconds, result = federated(args.dataset)
        rounds.append(seconds)
        alone.append(local(args.dataset, result))
    print(f"dataset {args.dataset}: one FedAvg round (federated) {median(rounds):.2f} s; the "
          f"same local training alone {median(alone):.2f} s; ratio "
          f"{median(rounds) / median(alone):.2f} (goal <= 1.3)")


if __name__ == "__main__":
    main()
