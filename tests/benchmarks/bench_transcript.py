"""Transcript recording and loading speed (a plain script, outside the default test run).

Run: ``python tests/benchmarks/bench_transcript.py [--messages N]``. Prints the
measured figures next to the goals:

* recording a small message (8 floats): <= 2.0 us into memory, <= 2.5 us through to disk and
  sent through the network to disk, each printed as median [min-max] of alternated runs beside
  the floor of the same work in plain Python (the receiver's read-only copy of the payload, a
  tuple of the message's fields, kept in a list) and as each round's ratio to that floor;
* array payloads written at >= 200 MB/s;
* loading a 100,000-message transcript into pandas in < 1 s.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from statistics import median

import numpy as np
import pandas as pd

from fedsec.network import Network
from fedsec.transcript import TranscriptWriter, read_pandas, read_transcript

HEADER = {"protocol": {"name": "benchmark"}, "parties": {"a": "client", "b": "server"}}


def record_small(n: int, path: Path | None) -> float:
    """Seconds per message for ``n`` 8-float messages."""
    writer = TranscriptWriter(HEADER, path)
    payload = np.arange(8.0)
    start = time.perf_counter()
    for i in range(n):
        writer.record(round=i // 100, phase="train", sender="a", receiver="b", tag="bench.small",
                      payload=payload)
    writer.close()
    return (time.perf_counter() - start) / n


def send_small(n: int, path: Path) -> float:
    """Seconds per message for ``n`` 8-float messages sent through the network to disk (what a
    protocol pays: the network's checks, then the recording)."""
    network = Network(TranscriptWriter(HEADER, path), HEADER["parties"])
    payload = np.arange(8.0)
    start = time.perf_counter()
    for r in range(0, n, 100):  # a round of 100 messages, as record_small's
        with network.stage("train", round=r // 100):
            for _ in range(min(100, n - r)):
                network.send("a", "b", "bench.small", payload)
    network.close()
    return (time.perf_counter() - start) / n


def floor_small(n: int) -> float:
    """Seconds per message for the least a recorder written in Python does per message."""
    payload = np.arange(8.0)
    kept: list[tuple] = []
    start = time.perf_counter()
    for i in range(n):
        raw = payload.tobytes()
        kept.append((i, i // 100, "train", "a", "b", "bench.small", payload.dtype.str,
                     payload.shape, np.frombuffer(raw, payload.dtype), time.perf_counter()))
    return (time.perf_counter() - start) / n


def record_arrays(total_mb: int, array_mb: int, path: Path) -> float:
    """MB/s when recording ``array_mb``-MB float arrays through to disk."""
    writer = TranscriptWriter(HEADER, path)
    payload = np.random.default_rng(0).random(array_mb * 131072)
    start = time.perf_counter()
    for i in range(total_mb // array_mb):
        writer.record(round=i, phase="train", sender="a", receiver="b", tag="bench.large",
                      payload=payload)
    writer.close()
    return total_mb / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--megabytes", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3, help="report the median of this many")
    args = parser.parse_args()
    n = args.messages
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.arrow"
        memory, disk, sent, floor = [], [], [], []
        for _ in range(args.repeat):  # alternated, so a busy spell touches all alike
            memory.append(record_small(n, None) * 1e6)
            disk.append(record_small(n, path) * 1e6)
            sent.append(send_small(n, path) * 1e6)
            floor.append(floor_small(n) * 1e6)
        floor_us = median(floor)
        print(f"median [min-max] of {args.repeat} alternated runs of {n:,} messages")
        print(f"floor (the same work in plain Python): {floor_us:6.2f} us/message "
              f"[{min(floor):.2f}-{max(floor):.2f}]")
        for where, runs, goal in (("record, memory only", memory, 2.0),
                                  ("record, through disk", disk, 2.5),
                                  ("network send, through disk", sent, 2.5)):
            us = median(runs)
            over = sorted(r / f for r, f in zip(runs, floor, strict=True))
            print(f"small message, {where}: {us:6.2f} us/message [{min(runs):.2f}-"
                  f"{max(runs):.2f}] ({1e6 / us:,.0f}/s; goal <= {goal} us: {us / goal:.2f} of "
                  f"it, {'met' if us <= goal else 'not met'}; over its round's floor "
                  f"{median(over):.2f}x [{over[0]:.2f}-{over[-1]:.2f}])")
        start = time.perf_counter()
        frame = pd.read_feather(path)
        feather_s = time.perf_counter() - start
        start = time.perf_counter()
        read_pandas(path)
        fedsec_s = time.perf_counter() - start
        assert len(frame) == n
        print(f"load {n:,} messages into pandas: read_feather {feather_s:.3f} s, "
              f"fedsec read_pandas {fedsec_s:.3f} s (goal < 1 s)")
        start = time.perf_counter()
        transcript = read_transcript(path)
        load_s = time.perf_counter() - start
        start = time.perf_counter()
        ok = transcript.verify().ok
        verify_s = time.perf_counter() - start
        print(f"read_transcript {load_s:.3f} s, verify {verify_s:.3f} s (intact: {ok})")
        (Path(tmp) / "small.arrow").unlink()
        rate = median(record_arrays(args.megabytes, 8, Path(tmp) / "arrays.arrow")
                      for _ in range(args.repeat))
        print(f"record 8 MB array payloads through disk: {rate:,.0f} MB/s "
              f"(goal >= 200 MB/s, ratio {rate / 200:.2f})")


if __name__ == "__main__":
    main()
