"""Wall time of ``fedsec run PROTOCOL`` in one process against ``--transport tcp``.

Runs the two commands in rotation (so a busy spell hits both alike), each as a fresh process,
and prints per transport: the best and the range of the process's wall time and of the
protocol's own wall time (``cost.total.wall_seconds`` in result.json; with tcp it includes
starting the party processes), the messages, payload bytes, and for tcp the bytes on the
sockets and the connections opened. Checks that both give the same chain head. Run it with
nothing else running::

    python tests/benchmarks/bench_transport.py --repeat 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", default="fedcg-secure")
    parser.add_argument("--dataset", default="iris")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[tuple[float, float]]] = {"inproc": [], "tcp": []}
    records: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            for transport in times:
                out = Path(tmp) / f"{transport}-{i}"
                command = [sys.executable, "-m", "fedsec.cli.main", "run", args.protocol,
                           "--dataset", args.dataset, "--transport", transport, "--out",
                           str(out)]
                started = time.perf_counter()
                proc = subprocess.run(command, capture_output=True, text=True, timeout=600,
                                      check=False)
                wall = time.perf_counter() - started
                if proc.returncode != 0:
                    sys.exit(f"{' '.join(command)} failed:\n{proc.stderr}")
                record = json.loads((out / "result.json").read_text())
                times[transport].append((wall, record["cost"]["total"]["wall_seconds"]))
                records[transport] = record
    heads = {t: r["transcript"]["head"] for t, r in records.items()}
    print(f"fedsec run {args.protocol} --dataset {args.dataset}, {args.repeat} runs each")
    for transport, rows in times.items():
        walls, protocol = [r[0] for r in rows], [r[1] for r in rows]
        cost = records[transport]["cost"]["total"]
        print(f"  {transport:6s} process wall {min(walls):.2f} s (range {min(walls):.2f}-"
              f"{max(walls):.2f}), protocol {min(protocol):.2f} s (range {min(protocol):.2f}-"
              f"{max(protocol):.2f}); {cost['messages']} messages, {cost['bytes']} payload bytes")
    described = records["tcp"]["transport"]
    print(f"  tcp: {described['socket_bytes']} bytes on the sockets between parties, "
          f"{described['control_bytes']} on the control sockets, {described['connections']} "
          f"connections, {described['digests_matched']} digests matched")
    print(f"  same chain head: {heads['inproc'] == heads['tcp']} ({heads['tcp'][:16]})")


if __name__ == "__main__":
    main()
