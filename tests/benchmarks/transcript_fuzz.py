"""Fuzz campaign against the transcript reader (a plain script, outside the default run).

Run: ``python tests/benchmarks/transcript_fuzz.py [--mutations 10000] [--seed 0]``.

Five small transcripts (FedCG naive and secure, FDSKL, NRI-DC, H-FedMV, under the plain,
noise and Paillier backends) are each mutated by every kind in
:data:`fedsec.transcript.damage.MUTATIONS` in turn, and every mutated file is checked by
:func:`fedsec.transcript.check_file` in a worker process (so a crash, a hang or a runaway
allocation is observed, not suffered): the worker has a 2 GiB address-space limit and each file
10 seconds. Each outcome is one of

- ``detected``: a verdict other than intact (truncated, tampered, aborted, not a transcript);
- ``harmless``: intact, and the chained content (header, every message but its timings, the
  end record) is the original's: the mutation hit what the chain does not cover;
- ``undetected``: intact, but the chained content differs (a failure);
- ``crashed``: anything but a verdict: an exception that is not fedsec's, a signal, running
  out of memory (a failure);
- ``hung``: no verdict within the time limit (a failure);
- ``disagreed``: the streaming check ``fedsec inspect`` makes (``keep_messages=False``: the
  chain checked from the batches' buffers, no message decoded) gives another verdict than the
  reading that decodes every message (a failure).

Printed: counts per mutation kind and in total, the slowest file and the worker's peak memory.
Target: 0 undetected, 0 crashed, 0 hung, 0 disagreed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from fedsec.plan import RunConfig
from fedsec.runner import run
from fedsec.transcript.damage import MUTATIONS, mutate

OUTCOMES = ("detected", "harmless", "undetected", "crashed", "hung", "disagreed")
TIMEOUT = 10.0
CONFIGS = [
    RunConfig(secret_seed=0, protocol="fedcg-naive", params={"n_landmarks": 4}),
    RunConfig(secret_seed=0, protocol="fedcg-secure", backend="noise", params={"n_landmarks": 4}),
    RunConfig(secret_seed=0, protocol="fdskl", params={"n_iterations": 20}),
    RunConfig(secret_seed=0, protocol="nri-dc"),
    RunConfig(secret_seed=0, protocol="h-fedmv", backend="paillier", params={"rounds": 1}),
]

WORKER = r"""
import json, resource, sys, time, traceback
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from fedsec.transcript import check_file
from fedsec.transcript.damage import fingerprint
for line in sys.stdin:
    path, original = json.loads(line)
    start = time.perf_counter()
    try:
        verdict = check_file(path)
        same = (verdict.status == "intact" and fingerprint(verdict.transcript) == original)
        # the streaming pass of fedsec inspect: nothing decoded, nothing kept
        streamed = check_file(path, keep_messages=False, traffic=True).status
        out = {"status": verdict.status, "same": same, "streamed": streamed}
    except BaseException as error:
        where = traceback.extract_tb(error.__traceback__)[-1]
        out = {"status": "crashed", "error": f"{type(error).__name__}: {str(error)[:200]} "
               f"(at {where.filename.rsplit('/', 1)[-1]}:{where.lineno})"}
    out["seconds"] = time.perf_counter() - start
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out), flush=True)
"""


class Worker:
    """A reader process fed one path at a time; replaced after a crash or a hang."""

    def __init__(self) -> None:
        self.proc = self._start()

    @staticmethod
    def _start() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                bufsize=1)

    def check(self, path: Path, original: str) -> dict[str, object]:
        import select

        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([str(path), original]) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        line = self.proc.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        hung = not ready
        self.proc.kill()
        self.proc.wait()
        code = self.proc.returncode
        self.proc = self._start()
        return {"status": "hung" if hung else "crashed", "error": f"exit {code}"}

    def close(self) -> None:
        self.proc.kill()


def outcome(result: dict[str, object]) -> str:
    status = result["status"]
    if status in ("crashed", "hung"):
        return str(status)
    if result["streamed"] != status:
        return "disagreed"
    if status != "intact":
        return "detected"
    return "harmless" if result["same"] else "undetected"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=5, help="failures to print per kind")
    args = parser.parse_args()
    from fedsec.transcript import read_transcript
    from fedsec.transcript.damage import fingerprint

    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        sources = []
        for i, config in enumerate(CONFIGS):
            out = Path(tmp) / f"source{i}"
            run(config, out_dir=out)
            path = out / "transcript.arrow"
            sources.append((path.read_bytes(), fingerprint(read_transcript(path))))
            print(f"source {i}: {config.protocol} ({config.backend}), "
                  f"{path.stat().st_size:,} bytes")
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        failures: dict[str, list[str]] = defaultdict(list)
        slowest, peak = 0.0, 0.0
        worker = Worker()
        target = Path(tmp) / "mutated.arrow"
        started = time.perf_counter()
        try:
            for i in range(args.mutations):
                kind = MUTATIONS[i % len(MUTATIONS)]
                data, original = sources[int(rng.integers(len(sources)))]
                target.write_bytes(mutate(data, kind, rng))
                result = worker.check(target, original)
                verdict = outcome(result)
                counts[kind][verdict] += 1
                slowest = max(slowest, float(result.get("seconds", TIMEOUT)))  # type: ignore[arg-type]
                peak = max(peak, float(result.get("maxrss_mb", 0.0)))  # type: ignore[arg-type]
                if verdict in ("undetected", "crashed", "hung"):
                    failures[kind].append(f"{verdict}: {result.get('error', '')}")
                if (i + 1) % 1000 == 0:
                    print(f"  {i + 1} mutations, {time.perf_counter() - started:.0f} s",
                          flush=True)
        finally:
            worker.close()
    total: Counter[str] = Counter()
    print(f"\n{'mutation':<15}" + "".join(f"{o:>12}" for o in OUTCOMES))
    for kind in MUTATIONS:
        total.update(counts[kind])
        print(f"{kind:<15}" + "".join(f"{counts[kind][o]:>12}" for o in OUTCOMES))
    print(f"{'total':<15}" + "".join(f"{total[o]:>12}" for o in OUTCOMES))
    print(f"\nslowest file: {slowest:.2f} s; worker peak RSS: {peak:.0f} MB; "
          f"{time.perf_counter() - started:.0f} s in all")
    for kind, lines in failures.items():
        print(f"\n{kind}:")
        for line in Counter(lines).most_common(args.show):
            print(f"  {line[1]} x {line[0]}")


if __name__ == "__main__":
    main()
