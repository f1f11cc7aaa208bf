"""What recording costs a Flower run (a plain script, outside the default test run).

Run: ``python tests/benchmarks/bench_flower.py [--clients 10] [--rounds 3] [--repeats 3]``.

The shipped FedAvg app (``flower-fedavg``: a 784-32-10 perceptron, one local epoch of SGD in
batches of 32 on the bundled MNIST subset split evenly among ``--clients``) in Flower's
simulation engine, twice per repeat, in alternating order:

* bare: Flower's ``run_simulation`` on the unwrapped apps (no ``record_plaintext`` mod), given
  the same run config and shards by two thin wrappers that only set it;
* recorded: what ``fedsec run flower-fedavg`` does, :func:`~fedsec.protocols.flower.simulation.
  run_recorded` with the recording Grid, the ClientApp wrapper logging digests, the truth mod,
  a transcript written to disk, then the cross-check and the truth collected.

Prints each side's wall seconds (min / median / max), the recorded-over-bare ratio of each
pair and of the medians (the goal: at most 1.10), and the seconds the server spent inside the
recorder (rows built, digests, transcript writes). Both sides start and stop Ray, which
dominates a run this small. Each run is a fresh process (``--one``), so no Ray or Flower state
carries over from one run to the next. ``--timeline`` prints instead when each of the ServerApp's
exchanges began and how long it took, and when the run ended, for the bare apps and for the
wrapped apps with and without the server recording. Flower's simulation engine and Ray are
imported before the clock on every side. Each run also reports the machine's busy CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np

from fedsec.network import Network
from fedsec.protocols.flower import app, spool
from fedsec.protocols.flower.recorder import Recorder
from fedsec.protocols.flower.simulation import (
    _quiet_flower,
    collect_truth,
    cross_check,
    run_recorded,
)
from fedsec.runner import RunConfig, data_split
from fedsec.transcript import TranscriptWriter

GOAL = 1.10
SEED = 0


def prepare(where: Path, n_clients: int) -> None:
    """The MNIST training rows split evenly into ``n_clients`` shards in the spool, and each
    client's own seed beside its shard."""
    train = data_split(RunConfig(protocol="flower-fedavg", seed=SEED)).train
    for partition, rows in enumerate(np.array_split(np.arange(train.n_samples), n_clients)):
        spool.save_arrays(where / spool.SHARDS / f"{partition}.npz",
                          {"X": train.X[rows], "y": train.y[rows]}, {"party": str(partition)})
        spool.save_seed(where, partition, spool.party_seed(SEED, f"client{partition}"))


def run_config(where: Path, n_clients: int, rounds: int) -> dict[str, Any]:
    return {app.N_CLASSES: 10, app.ROUNDS: rounds, app.CLIENTS: n_clients,
            app.LOCAL_EPOCHS: 1, app.BATCH_SIZE: 32, app.LR: 0.1, app.HIDDEN: 32,
            app.TIMEOUT: 600.0, app.N_INPUTS: 784, spool.SPOOL_KEY: str(where),
            spool.SEED_KEY: SEED}


class ConfiguredServerApp:
    """A ServerApp with fedsec's run config set, and nothing else (the bare side)."""

    def __init__(self, inner: Any, config: dict[str, Any]) -> None:
        self.inner, self.config = inner, config

    def __call__(self, grid: Any, context: Any) -> None:
        context.run_config.update(self.config)
        self.inner(grid=grid, context=context)


class ConfiguredClientApp:
    """A ClientApp with fedsec's run config set while it runs (restored after, as the engine
    requires), and nothing else (the bare side)."""

    def __init__(self, inner: Any, config: dict[str, Any]) -> None:
        self.inner, self.config = inner, config

    def __call__(self, message: Any, context: Any) -> Any:
        original = dict(context.run_config)
        context.run_config.update(self.config)
        try:
            return self.inner(message=message, context=context)
        finally:
            context.run_config.clear()
            context.run_config.update(original)


def bare(n_clients: int, rounds: int) -> float:
    """Wall seconds of the unrecorded run."""
    import flwr.simulation
    import ray

    where = spool.make_spool()
    try:
        prepare(where, n_clients)
        config = run_config(where, n_clients, rounds)
        backend = {"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                   "init_args": {"num_cpus": min(n_clients, 2), "num_gpus": 0,
                                 "include_dashboard": False, "log_to_driver": False}}
        start = time.perf_counter()
        try:
            with _quiet_flower():
                flwr.simulation.run_simulation(
                    server_app=ConfiguredServerApp(app.server_app(), config),
                    client_app=ConfiguredClientApp(app.client_app(record=False), config),
                    num_supernodes=n_clients, backend_config=backend)
        finally:
            if ray.is_initialized():
                ray.shutdown()
        return time.perf_counter() - start
    finally:
        shutil.rmtree(where, ignore_errors=True)


def recorded(n_clients: int, rounds: int, out: Path,
             keep: bool = True) -> tuple[float, float, int]:
    """Wall seconds of the recorded run (with the cross-check and the truth collected), the
    seconds the server spent inside the recorder, and the transcript's rows. With ``keep``
    false (``--diagnose``'s middle side) everything runs but the server records nothing and
    nothing is checked or collected after: what the client-side wrappers and mods cost.

    Flower's simulation engine and Ray are imported before the clock starts, as :func:`bare`
    imports them (about 0.9 s in a fresh process, which the recorded side alone once paid)."""
    import flwr.simulation  # noqa: F401
    import ray  # noqa: F401

    where = spool.make_spool()
    clients = [f"client{i}" for i in range(n_clients)]
    try:
        prepare(where, n_clients)
        config = run_config(where, n_clients, rounds)
        writer = TranscriptWriter({"protocol": {"name": "bench-flower"},
                                   "parties": {"server": "server",
                                               **dict.fromkeys(clients, "client")}},
                                  out / "transcript.arrow")
        recorder = Recorder(Network(writer, {"server": "server",
                                             **dict.fromkeys(clients, "client")}),
                            "server", clients)
        inside = [0.0]
        record = recorder.record

        def timed(message: Any, direction: str) -> None:
            begun = time.perf_counter()
            if keep:
                record(message, direction)
            inside[0] += time.perf_counter() - begun

        recorder.record = timed  # type: ignore[method-assign]
        start = time.perf_counter()
        run_recorded(app.server_app(), app.client_app(record=True), recorder, config,
                     cpus=min(n_clients, 2))
        if keep:
            cross_check(where, recorder)
            collect_truth(where, recorder)
        rows = len(recorder.network.close())
        return time.perf_counter() - start, inside[0], rows
    finally:
        shutil.rmtree(where, ignore_errors=True)


def timeline(side: str, n_clients: int, rounds: int) -> list[tuple[float, float]]:
    """Each exchange of one ``side`` run (``bare``, ``wrapped`` or ``recorded``) in this
    process: when the ServerApp's ``send_and_receive`` began (seconds from the run's start)
    and how long it took, then one last pair: when the run ended and 0. The first exchange
    includes the engine's and the clients' start-up."""
    if side == "bare":
        from flwr.superlink.grid.inmemory_grid import InMemoryGrid

        grid: Any = InMemoryGrid
    else:
        from fedsec.protocols.flower.recorder import _grid_class

        grid = _grid_class()
    inner = grid.send_and_receive
    begun = time.perf_counter()
    out: list[tuple[float, float]] = []

    def logged(self: Any, messages: Any, *, timeout: float | None = None) -> Any:
        start = time.perf_counter()
        try:
            return inner(self, messages, timeout=timeout)
        finally:
            out.append((start - begun, time.perf_counter() - start))

    grid.send_and_receive = logged
    try:
        if side == "bare":
            bare(n_clients, rounds)
        else:
            with tempfile.TemporaryDirectory() as folder:
                recorded(n_clients, rounds, Path(folder), keep=side == "recorded")
    finally:
        grid.send_and_receive = inner
    return [*out, (time.perf_counter() - begun, 0.0)]


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {median(values):.2f} / {max(values):.2f}"


def machine_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy (user, nice, system; ``/proc/stat``): a
    run's difference covers the driver, Ray's processes and the actors, and whatever else
    ran meanwhile (so read it on an idle machine). NaN where there is no ``/proc/stat``."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return float("nan")
    user, nice, system = (int(v) for v in fields[:3])
    return (user + nice + system) / os.sysconf("SC_CLK_TCK")


def one(side: str, n_clients: int, rounds: int) -> dict[str, float]:
    """Run one side in this process: its wall seconds and the machine's busy CPU seconds
    meanwhile (and the recorder's share, rows)."""
    cpu = machine_cpu_seconds()
    if side == "bare":
        return {"seconds": bare(n_clients, rounds), "cpu": machine_cpu_seconds() - cpu}
    with tempfile.TemporaryDirectory() as folder:
        seconds, inside, rows = recorded(n_clients, rounds, Path(folder),
                                         keep=side == "recorded")
    return {"seconds": seconds, "inside": inside, "rows": rows,
            "cpu": machine_cpu_seconds() - cpu}


def in_fresh_process(side: str, n_clients: int, rounds: int) -> dict[str, float]:
    """:func:`one` in a new Python process (its last line of output is the JSON result)."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", side, "--clients", str(n_clients),
         "--rounds", str(rounds)], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def print_timelines(args: argparse.Namespace) -> None:
    """``--timeline``: each exchange's start and duration, bare, wrapped and recorded."""
    for repeat in range(args.repeats):
        order = ("bare", "wrapped", "recorded")
        order = order if repeat % 2 == 0 else order[::-1]
        for side in order:
            done = subprocess.run(
                [sys.executable, __file__, "--one-timeline", side, "--clients",
                 str(args.clients), "--rounds", str(args.rounds)],
                capture_output=True, text=True, check=True)
            exchanges = json.loads(done.stdout.strip().splitlines()[-1])
            *exchanges, (ended, _) = exchanges
            print(f"repeat {repeat + 1} {side:>8}: "
                  + ", ".join(f"{start:.2f}+{took:.2f}" for start, took in exchanges)
                  + f"; run ends at {ended:.2f}  (seconds from the run's start: "
                    "start+duration of each exchange)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--diagnose", action="store_true",
                        help="also run the wrapped apps with the server recording nothing, "
                             "to tell the client side's cost from the server side's")
    parser.add_argument("--timeline", action="store_true",
                        help="instead of timing whole runs, print each exchange of a bare, a "
                             "wrapped and a recorded run (fresh processes, alternated --repeats "
                             "times)")
    parser.add_argument("--one", choices=("bare", "wrapped", "recorded"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--one-timeline", choices=("bare", "wrapped", "recorded"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.clients, args.rounds)))
        return
    if args.one_timeline is not None:
        print(json.dumps(timeline(args.one_timeline, args.clients, args.rounds)))
        return
    if args.timeline:
        print_timelines(args)
        return
    plain: list[float] = []
    timed: list[float] = []
    wrapped: list[float] = []
    inside: list[float] = []
    cpu: dict[str, list[float]] = {"bare": [], "wrapped": [], "recorded": []}
    rows = 0
    for repeat in range(args.repeats):
        order = ("bare", "wrapped", "recorded") if args.diagnose else ("bare", "recorded")
        for side in order if repeat % 2 == 0 else order[::-1]:
            result = in_fresh_process(side, args.clients, args.rounds)
            cpu[side].append(result["cpu"])
            if side == "bare":
                plain.append(result["seconds"])
            elif side == "wrapped":
                wrapped.append(result["seconds"])
            else:
                timed.append(result["seconds"])
                inside.append(result["inside"])
                rows = int(result["rows"])
        print(f"repeat {repeat + 1}: bare {plain[-1]:.2f} s, recorded {timed[-1]:.2f} s "
              f"(ratio {timed[-1] / plain[-1]:.3f})", flush=True)
    ratio = median(timed) / median(plain)
    print(f"flower-fedavg, {args.clients} clients, {args.rounds} rounds, {args.repeats} "
          f"repeats (wall seconds min / median / max):")
    print(f"  bare run_simulation:  {spread(plain)}")
    print(f"  recorded (fedsec):    {spread(timed)}   {rows} transcript rows")
    if wrapped:
        print(f"  wrapped, recording nothing: {spread(wrapped)}   (over bare, medians: "
              f"{median(wrapped) / median(plain):.3f})")
    print(f"  inside the recorder (server side): {spread(inside)}")
    print("  machine CPU seconds meanwhile (all processes; idle machine only): "
          + ", ".join(f"{side} {spread(values)}" for side, values in cpu.items() if values))
    print("  recorded / bare, per pair: "
          + ", ".join(f"{t / p:.3f}" for t, p in zip(timed, plain, strict=True)))
    pairs = [t / p for t, p in zip(timed, plain, strict=True)]
    print(f"  recorded / bare, median of the pairs: {median(pairs):.3f}")
    print(f"  recorded / bare, medians: {ratio:.3f} (goal <= {GOAL:.2f}: "
          f"{'met' if ratio <= GOAL else 'NOT met'})")


if __name__ == "__main__":
    main()
