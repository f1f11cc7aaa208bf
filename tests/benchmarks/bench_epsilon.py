"""What the one-run privacy audit costs (a plain script, outside the default test run).

Run: ``python tests/benchmarks/bench_epsilon.py [--repeats N]``. Times one audit cell of
secure-sum on Iris among five parties with gaussian-noise (sigma 1, clip 1), attacked by
contribution-readout as the aggregator, against the same cell in canary mode (1,000 canaries
in the first party's vector) that also runs canary-guess scored by canary-epsilon (the one-run
bound), the two alternated so that both see the same machine load. Prints min, median and max
of each and the ratio of the medians beside the goal: at most 2.
"""

from __future__ import annotations

import argparse
import time
from statistics import median
from typing import Any

from fedsec.audit.cell import run_cell
from fedsec.audit.spec import AuditSpec, parse_spec

GOAL = 2.0


def scenario(canaries: int) -> AuditSpec:
    """The one-cell audit: with ``canaries`` (and the canary audit) or without (0)."""
    attacks: list[dict[str, Any]] = [{"name": "contribution-readout", "as": ["aggregator"]}]
    if canaries:
        attacks.append({"name": "canary-guess", "as": ["aggregator"],
                        "scorer": "canary-epsilon"})
    spec = parse_spec({
        "audit": {"name": "bench", "description": "one cell", "protocols": ["secure-sum"],
                  "dataset": "iris", "partition": "horizontal:parties=5",
                  "backends": ["plain"], "seeds": [0], "secret_seed": 0},
        "params": {"canaries": canaries},
        "defenses": [{"name": "gaussian-noise", "sigma": [1.0], "clip": [1.0]}],
        "attacks": attacks,
    })
    return spec


def time_cell(spec: AuditSpec) -> float:
    """Seconds for the defended cell of ``spec``, run as an audit runs it."""
    cell = next(c for c in spec.cells() if c.defense is not None)
    start = time.perf_counter()
    result = run_cell(spec, cell)
    seconds = time.perf_counter() - start
    if result["status"] != "ok" or any(a["status"] != "ok" for a in result["attacks"]):
        raise SystemExit(f"the benchmark cell failed: {result}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    plain, audited = scenario(0), scenario(1000)
    time_cell(plain), time_cell(audited)  # warm up: imports, the dataset, the accountant
    times: dict[str, list[float]] = {"without canaries": [], "1,000 canaries + audit": []}
    for _ in range(args.repeats):
        times["without canaries"].append(time_cell(plain))
        times["1,000 canaries + audit"].append(time_cell(audited))
    for name, values in times.items():
        print(f"{name:>24}: min {min(values):.3f} s, median {median(values):.3f} s, "
              f"max {max(values):.3f} s ({len(values)} runs)")
    ratio = median(times["1,000 canaries + audit"]) / median(times["without canaries"])
    verdict = "meets" if ratio <= GOAL else "MISSES"
    print(f"ratio of medians: {ratio:.2f} ({verdict} the goal <= {GOAL:g})")


if __name__ == "__main__":
    main()
