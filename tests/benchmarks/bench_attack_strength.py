"""Attack strength: does a shipped scenario's attack change its score with ten times its budget?

An audit's "no leak" means something only if the attacks were run to convergence. For every
shipped scenario (``audits/*.toml``) and every iterative attack it runs, this script runs the
scenario's first cells (first seed, ``--cells`` of them), then each attack as each of its
adversaries three times on the same run: at its default budget (the scenario's parameters),
at ten times every budget parameter the attack declares (``budget_params``: steps, epochs,
sweeps), and with four times its starting points (``starts_params``: restarts), keeping the
best by the attack's own objective. It prints the scores side by side, with the CPU seconds
each took, how the attack's optimiser stopped, and whether the default is within the
tolerances an audit needs: 0.5 dB PSNR, 2 points of re-identification, 5% relative error
(and 0.02 of advantage for other scorers). Closed-form attacks are listed once (a budget
changes nothing).

    python tests/benchmarks/bench_attack_strength.py                    # every scenario
    python tests/benchmarks/bench_attack_strength.py --scenarios fedgraph_depth --pick 2,4
    python tests/benchmarks/bench_attack_strength.py --json out.json    # the table as JSON
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from fedsec import registry
from fedsec.audit import load_spec
from fedsec.audit.cell import run_config
from fedsec.convergence import of_attack
from fedsec.runner import run
from fedsec.threads import limited_threads
from fedsec.views import build_view

AUDITS = Path(__file__).resolve().parents[2] / "audits"
#: Metric: (largest change of the default from ten times the budget that passes, relative?).
TOLERANCES = {"psnr": (0.5, False), "reidentified": (0.02, False),
              "relative_error": (0.05, True), "point_error": (0.05, True),
              "distance_error": (0.05, True), "mse": (0.05, True),
              "advantage": (0.02, False)}
BUDGET_FACTOR = 10
STARTS_FACTOR = 4


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default="",
                        help="comma-separated scenario names (default: every one in audits/)")
    parser.add_argument("--cells", type=int, default=1,
                        help="cells of each scenario's grid (first seed, in grid order)")
    parser.add_argument("--pick", default="",
                        help="instead of the first cells, these positions in the first seed's "
                             "grid (comma-separated, from 0)")
    parser.add_argument("--attacks", default="", help="only these attacks (comma-separated)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args()
    wanted = [n for n in args.scenarios.split(",") if n]
    paths = [AUDITS / f"{n}.toml" for n in wanted] or sorted(AUDITS.glob("*.toml"))
    only = {a for a in args.attacks.split(",") if a}
    rows: list[dict[str, Any]] = []
    with limited_threads():
        for path in paths:
            rows += scenario_rows(path, args.cells, only,
                                  [int(i) for i in args.pick.split(",") if i])
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str))
    failing = [r for r in rows if r.get("within") is False]
    print(f"\n{len(rows)} rows; {len(failing)} where ten times the budget moves the score "
          "beyond the tolerance.")
    return 0


def scenario_rows(path: Path, n_cells: int, only: set[str],
                  pick: list[int]) -> list[dict[str, Any]]:
    spec = load_spec(path)
    first_seed = min(cell.seed for cell in spec.cells())
    grid = [c for c in spec.cells() if c.seed == first_seed]
    cells = [grid[i] for i in pick if i < len(grid)] if pick else grid[:n_cells]
    rows = []
    for cell in cells:
        started = time.process_time()
        result = run(run_config(spec, cell))
        print(f"\n== {path.stem}: {cell.configuration} (run {time.process_time() - started:.1f}"
              " CPU-s)", flush=True)
        for spec_attack in spec.attacks:
            if only and spec_attack.name not in only:
                continue
            for threat in spec_attack.threats:
                row = attack_row(spec, spec_attack, threat, result)
                row.update(scenario=path.stem, cell=cell.configuration)
                print_row(row)
                rows.append(row)
    return rows


def attack_row(spec: Any, spec_attack: Any, threat: str, result: Any) -> dict[str, Any]:
    """One attack as one adversary: default, ten times the budget, more starts."""
    view = build_view(result.transcript, threat, result.private, run_seed=result.record.seed)
    cls = registry.get("attack", spec_attack.name, search=spec.search_path)
    params = dict(spec_attack.params)
    row: dict[str, Any] = {"attack": spec_attack.label, "threat": threat}
    probe = registry.create("attack", spec_attack.name, params, search=spec.search_path)
    reason = probe.not_applicable(view)
    if reason is not None:
        return {**row, "status": f"not applicable ({reason.split(';')[0]})"}
    variants = {"default": params}
    budget = tuple(getattr(cls, "budget_params", ()))
    starts = tuple(getattr(cls, "starts_params", ()))
    defaults = cls.Params() if hasattr(cls, "Params") else None
    if not cls.closed_form and budget:
        variants["x10 budget"] = {**params, **{name: BUDGET_FACTOR * int(
            params.get(name, getattr(defaults, name))) for name in budget}}
    if not cls.closed_form and starts:
        variants["x4 starts"] = {**params, **{name: max(1, STARTS_FACTOR * int(
            params.get(name, getattr(defaults, name)))) for name in starts}}
    for label, chosen in variants.items():
        try:
            row[label] = score(spec, spec_attack, chosen, view, result)
        except Exception as error:  # an attack that fails here fails in the audit as well
            return {**row, "status": f"failed ({type(error).__name__}: {error})"}
    row["status"] = "closed form" if cls.closed_form else "ok"
    if "x10 budget" in row:
        row["within"] = within(row["default"]["scores"], row["x10 budget"]["scores"])
    return row


def score(spec: Any, spec_attack: Any, params: dict[str, Any], view: Any,
          result: Any) -> dict[str, Any]:
    attack = registry.create("attack", spec_attack.name, params, search=spec.search_path)
    scorer = registry.create("scorer", spec_attack.scorer, dict(spec_attack.scorer_params),
                             search=spec.search_path)
    started = time.process_time()
    reconstruction = attack.run(view)
    seconds = time.process_time() - started
    scores = scorer.score(reconstruction, result.private)
    convergence = of_attack(reconstruction.info, type(attack).closed_form)
    return {"scores": {k: v for k, v in scores.items() if k in TOLERANCES or k == "advantage"},
            "cpu_seconds": seconds, "stopped": convergence["stopped"],
            "converged": convergence["converged"]}


def within(default: dict[str, Any], stronger: dict[str, Any]) -> bool:
    """Whether the default's scores are within the tolerances of the stronger run's."""
    for name, (tol, relative) in TOLERANCES.items():
        a, b = default.get(name), stronger.get(name)
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            continue
        if not (math.isfinite(a) and math.isfinite(b)):
            continue
        gap = abs(a - b) / max(abs(b), 1e-12) if relative else abs(a - b)
        if gap > tol:
            return False
    return True


def print_row(row: dict[str, Any]) -> None:
    head = f"  {row['attack']} as {row['threat']}"
    if row["status"] not in ("ok", "closed form"):
        print(f"{head}: {row['status']}")
        return
    if row["status"] == "closed form":
        print(f"{head}: closed form; {fmt(row['default'])}")
        return
    print(head + (f"  [ten times the budget within tolerance: {row['within']}]"
                  if "within" in row else "  [no budget parameter declared]"))
    for label in ("default", "x10 budget", "x4 starts"):
        if label in row:
            print(f"    {label:>10}: {fmt(row[label])}")


def fmt(entry: dict[str, Any]) -> str:
    shown = ", ".join(f"{k} {v:.4g}" for k, v in entry["scores"].items()
                      if isinstance(v, (int, float)))
    return f"{shown}; {entry['cpu_seconds']:.1f} CPU-s; stopped: {entry['stopped']}"


if __name__ == "__main__":
    sys.exit(main())
