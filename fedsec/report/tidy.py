"""The audit's results as one tidy table: a row per run × attack × adversary, flat columns.

``results.csv`` (and ``results.parquet``) beside the report: ``pandas.read_csv`` reads it in one
call. Columns: the cell and its configuration (protocol, dataset, backend, defence and its
parameters, every protocol parameter as ``param.NAME``, seed), the run's status and accuracy,
the accountant's ``privacy.epsilon`` at ``privacy.delta`` (empty when no defence adds noise or
none states an epsilon, :mod:`fedsec.privacy.accountant`), then the attack, adversary, scorer
and attack status, whether the attack converged
(``converged``: true, false, or empty when it did not say) and why it stopped (``stopped``:
closed-form, converged, stalled, budget, diverged), and every number the scorer reported
as ``leakage.NAME`` (its baselines as ``leakage.baseline_NAME``). A run that failed has one
row with its error and no attack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fedsec.results import write_atomically


def tidy_rows(cells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per (run, attack, adversary).

    Examples
    --------
    >>> cell = {"cell": "c1", "configuration": "p | plain | no defence", "status": "ok",
    ...         "config": {"protocol": "p", "dataset": "", "backend": "plain", "defense": None,
    ...                    "params": {"m": 3}, "seed": 0},
    ...         "metrics": {"accuracy": 0.9}, "attacks": [
    ...             {"attack": "a", "threat": "server", "scorer": "s", "status": "ok",
    ...              "scores": {"advantage": 1.0, "baseline_error": 0.5}}]}
    >>> row = tidy_rows([cell])[0]
    >>> row["param.m"], row["leakage.advantage"], row["attack_status"]
    (3, 1.0, 'ok')
    """
    rows = []
    for cell in cells:
        config = cell.get("config", {})
        defense = config.get("defense") or {}
        base: dict[str, Any] = {
            "cell": cell.get("cell"), "configuration": cell.get("configuration"),
            "protocol": config.get("protocol"),
            "dataset": cell.get("dataset") or config.get("dataset") or None,
            "backend": config.get("backend"), "defense": defense.get("name"),
            "defense_params": ",".join(f"{k}={v}" for k, v in defense.get("params", {}).items())
            or None,
            "seed": config.get("seed"), "status": cell.get("status"),
            "error": cell.get("error"),
            "accuracy": cell.get("metrics", {}).get("accuracy"),
            "agrees_with_reference": cell.get("agrees_with_reference"),
            "privacy.epsilon": (cell.get("privacy") or {}).get("epsilon"),
            "privacy.delta": (cell.get("privacy") or {}).get("delta"),
        }
        base.update({f"param.{k}": v for k, v in config.get("params", {}).items()})
        attacks = cell.get("attacks", []) if cell.get("status") == "ok" else []
        if not attacks:
            rows.append(base)
        for attack in attacks:
            row = {**base, "attack": attack["attack"], "threat": attack["threat"],
                   "scorer": attack.get("scorer"), "attack_status": attack["status"],
                   "reason": attack.get("reason") or attack.get("error"),
                   "converged": (attack.get("convergence") or {}).get("converged"),
                   "stopped": (attack.get("convergence") or {}).get("stopped")}
            row.update({f"leakage.{k}": v for k, v in attack.get("scores", {}).items()
                        if v is None or isinstance(v, (int, float, bool))})
            rows.append(row)
    return rows


def write_tidy(out: Path, cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """Write ``results.csv`` and ``results.parquet`` into ``out`` (atomically); their names."""
    import pandas as pd

    frame = pd.DataFrame(tidy_rows(cells))
    write_atomically(out / "results.csv", lambda tmp: frame.to_csv(tmp, index=False))
    write_atomically(out / "results.parquet", lambda tmp: frame.to_parquet(tmp, index=False))
    return ["results.csv", "results.parquet"]
