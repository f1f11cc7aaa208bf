"""Audit engine speed (a plain script): parallel speed-up and report cost.

Run: ``python tests/benchmarks/bench_audit.py``. A 16-cell audit (FedCG naive
and secure, plain and noise, four landmark counts, on Breast Cancer) runs with
one job and with two; prints the speed-up (goal: at least 1.7x on 2 cores)
and the report's share of the audit time (goal: under 10%).
"""

from __future__ import annotations

import tempfile
import textwrap
import time
from pathlib import Path

from fedsec.audit import load_spec, run_audit
from fedsec.report import build_report

SCENARIO = """
[audit]
name = "bench"
protocols = ["fedcg-naive", "fedcg-secure"]
dataset = "breast_cancer"
partition = "hybrid:cohorts=2,groups=3,centres=per-cohort"
backends = ["plain", "noise"]

[sweep]
n_landmarks = [25, 50, 75, 100]

[[attacks]]
name = "multilateration"
as = ["server"]
scorer = "point-recovery"

[[attacks]]
name = "gram-inference"
as = ["server"]
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.toml"
        path.write_text(textwrap.dedent(SCENARIO))
        spec = load_spec(path)
        assert len(spec.cells()) == 16
        times = {}
        for jobs in (1, 2):
            start = time.perf_counter()
            run_audit(spec, Path(tmp) / f"jobs{jobs}", jobs=jobs)
            times[jobs] = time.perf_counter() - start
        start = time.perf_counter()
        build_report(Path(tmp) / "jobs2")
        report = time.perf_counter() - start
    print(f"16-cell audit: --jobs 1 {times[1]:.1f} s, --jobs 2 {times[2]:.1f} s, speed-up "
          f"{times[1] / times[2]:.2f}x (goal >= 1.7x)")
    print(f"report generation {report:.2f} s = {100 * report / times[2]:.1f}% of the --jobs 2 "
          f"audit (goal < 10%)")


if __name__ == "__main__":
    main()
