"""Building a View of a large transcript file (a plain script, outside the default run).

Run: ``python tests/benchmarks/bench_view.py [--messages 1000000] [--repeats 3] [--messages-too]``.

Writes a transcript of ``--messages`` small messages (8 floats each, as
``transcript_verify.py`` does), then measures, each in a fresh process (times exclude the
imports of ``fedsec.transcript`` and ``fedsec.views``; memory is the growth of the process's
peak resident set over what it held after them, the file's mapped pages included), the runs of
each alternated so that drift hits all alike:

- ``check``: the streaming verdict, ``check_file(path, keep_messages=False)`` (every batch
  validated and chained, one batch in memory at a time): the reference;
- ``view``: what an attack pays before it starts, ``read_transcript`` (every batch validated
  and its messages checked), ``Transcript.verify()`` (the chain) and ``build_view`` for the
  receiving party (who observes every message);
- ``view + read``: the same, then every message of the View built and its payload summed (what
  an attack that reads every message adds);
- ``messages`` (with ``--messages-too``): the same View built from messages decoded one by one
  (how every View was built before it was selected from the record batches).

Goal: ``view`` within 3x the ``check`` time and within 2x the file's size in memory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from transcript_verify import write  # the same 1,000,000 small messages (a sibling script)

MEASURE = r"""
import json, sys, time
from dataclasses import replace
from fedsec.transcript import check_file, read_transcript
from fedsec.views import build_view
path, what = sys.argv[1], sys.argv[2]


def peak_mb():  # this process's own high-water mark (ru_maxrss would carry the parent's)
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


before = peak_mb()
start = time.perf_counter()
if what == "check":
    status = check_file(path, keep_messages=False).status
else:
    transcript = read_transcript(path)
    if what == "messages":
        from fedsec.transcript.reader import open_messages
        with open_messages(path) as stream:
            transcript = replace(transcript, messages=tuple(stream))
    report = transcript.verify()
    view = build_view(transcript, "b")
    status = f"{report.status}, {len(view.messages)} observed"
    if what == "view + read":
        total = sum(float(m.payload.sum()) for m in view.messages)
        status += f", payloads sum to {total:.0f}"
seconds = time.perf_counter() - start
grown = peak_mb() - before
print(json.dumps({"seconds": seconds, "status": status, "grown_mb": grown}))
"""


def measure(path: Path, what: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", MEASURE, str(path), what], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--messages-too", action="store_true",
                        help="also build the View from messages decoded one by one (slow)")
    args = parser.parse_args()
    contenders = ["check", "view", "view + read", *(["messages"] if args.messages_too else [])]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.arrow"
        seconds = write(path, args.messages)
        size_mb = path.stat().st_size / 2**20
        print(f"{args.messages:,} messages written in {seconds:.1f} s ({size_mb:.0f} MiB)")
        results: dict[str, list[dict[str, float]]] = {}
        for _ in range(args.repeats):
            for what in contenders:
                results.setdefault(what, []).append(measure(path, what))
    check = median(r["seconds"] for r in results["check"])
    print(f"\n{'':12}{'min s':>8}{'median s':>10}{'max s':>8}{'x check':>9}{'grown MiB':>11}"
          f"{'x file':>8}  verdict")
    for what, runs in results.items():
        times = [r["seconds"] for r in runs]
        grown = max(r["grown_mb"] for r in runs)
        print(f"{what:12}{min(times):8.3f}{median(times):10.3f}{max(times):8.3f}"
              f"{median(times) / check:9.2f}{grown:11.0f}{grown / size_mb:8.2f}  "
              f"{runs[0]['status']}")
    view = median(r["seconds"] for r in results["view"])
    grown = max(r["grown_mb"] for r in results["view"])
    print(f"\ngoal: view <= 3x check: {view / check:.2f}x (median against median); peak memory "
          f"growth <= 2x the file: {grown / size_mb:.2f}x (the largest of {args.repeats} runs)")


if __name__ == "__main__":
    main()
