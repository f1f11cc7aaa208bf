"""From cell results to configurations: means and confidence intervals over seeds."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

#: Leakage metric the frontier and the verdicts use (every built-in scorer reports it).
LEAKAGE = "advantage"


#: Metrics that are fractions in [0, 1] (by name, or by these prefixes and suffixes).
_UNIT = ("accuracy", "precision", "recall", "f1", "roc_auc", "captured", "same_neighbours",
         "recovered", "reidentified", "linked", "label_accuracy")


def metric_range(name: str) -> tuple[float, float]:
    """The range a metric's values live in, for clipping intervals.

    Examples
    --------
    >>> metric_range("baseline_fraction_recovered"), metric_range("advantage")
    ((0.0, 1.0), (-inf, 1.0))
    >>> metric_range("relative_error")
    (0.0, inf)
    """
    bare = name.removeprefix("baseline_")
    if bare in _UNIT or bare.startswith("fraction_") or bare.endswith("_accuracy"):
        return 0.0, 1.0
    if bare == "advantage":
        return -math.inf, 1.0
    if bare.endswith(("error", "_rank", "angle")) or bare in ("bytes", "messages"):
        return 0.0, math.inf
    return -math.inf, math.inf


def mean_ci(values: Iterable[float | None],
            bounds: tuple[float, float] = (-math.inf, math.inf)) -> dict[str, Any]:
    """Mean and a 95% normal-approximation interval ``mean ± 1.96 s / sqrt(n)``, clipped to
    ``bounds`` (the metric's range: an accuracy interval never passes 1).

    Examples
    --------
    >>> mean_ci([1.0, 3.0])["mean"]
    2.0
    >>> mean_ci([5.0])["ci"] is None
    True
    >>> mean_ci([0.9, 1.0, 1.0], bounds=(0.0, 1.0))["ci"][1]
    1.0
    """
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not finite:
        return {"mean": None, "ci": None, "n": 0}
    mean = float(np.mean(finite))
    if len(finite) < 2:
        return {"mean": mean, "ci": None, "n": 1}
    half = 1.96 * float(np.std(finite, ddof=1)) / math.sqrt(len(finite))
    low, high = bounds
    return {"mean": mean, "ci": [max(mean - half, low), min(mean + half, high)],
            "n": len(finite)}


def pareto_front(leakage: Sequence[float], accuracy: Sequence[float]) -> list[bool]:
    """Which points no other point beats on both lower leakage and higher accuracy.

    Examples
    --------
    >>> pareto_front([0.1, 0.5, 0.2], [0.9, 0.95, 0.8])
    [True, True, False]
    """
    points = list(zip(leakage, accuracy, strict=True))
    front = []
    for i, (li, ai) in enumerate(points):
        dominated = any(lj <= li and aj >= ai and (lj < li or aj > ai)
                        for j, (lj, aj) in enumerate(points) if j != i)
        front.append(not dominated)
    return front


def configurations(cells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per configuration (everything but the seed), with seeds aggregated."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for cell in cells:
        groups[cell["configuration"]].append(cell)
    out = []
    for label, members in groups.items():
        ok = [c for c in members if c["status"] == "ok"]
        config = dict(members[0]["config"])
        config.pop("seed", None)
        entry: dict[str, Any] = {
            "configuration": label, "config": config, "seeds": sorted(c["config"]["seed"]
                                                                      for c in members),
            "errors": [c.get("error") for c in members if c["status"] != "ok"],
            "accuracy": mean_ci((c["metrics"].get("accuracy") for c in ok), (0.0, 1.0)),
            "metrics": {k: mean_ci((c["metrics"].get(k) for c in ok), metric_range(k))
                        for k in _numeric(ok)},
            "agrees_with_reference": agreement(c.get("agrees_with_reference") for c in ok),
            "cost": {k: mean_ci(c["cost"].get(k) for c in ok)
                     for k in ("bytes", "messages", "wall_seconds", "crypto_seconds")},
            "attacks": _attacks(ok),
            "privacy": run_privacy(ok),
            "commands": [c["command"] for c in members],
        }
        out.append(entry)
    return out


def agreement(verdicts: Iterable[bool | None]) -> bool | None:
    """One configuration's agreement over its seeds: None when no seed claims one (an
    infinite tolerance, no reference), else whether every claimed one holds.

    >>> agreement([True, True]), agreement([True, False]), agreement([None, None])
    (True, False, None)
    """
    claimed = [v for v in verdicts if v is not None]
    return all(claimed) if claimed else None


def _numeric(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """The protocol's numeric metrics (accuracy, a sum's error, ...) the cells report."""
    return sorted({k for c in cells for k, v in c["metrics"].items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)})


def utility(config: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """What a configuration's protocol achieves, for weighing leakage against: its test
    accuracy, or (for a protocol without one, such as a secure sum) its first error metric
    against the exact result.

    Examples
    --------
    >>> utility({"accuracy": {"mean": None}, "metrics": {"sum_relative_error": {"mean": 0.1}}})
    ('sum_relative_error', {'mean': 0.1})
    """
    if config["accuracy"].get("mean") is not None:
        return "accuracy", config["accuracy"]
    errors = [k for k in config.get("metrics", {}) if k.endswith("error")]
    return (errors[0], config["metrics"][errors[0]]) if errors else None


def _attacks(cells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for cell in cells:
        for entry in cell["attacks"]:
            groups[(entry["attack"], entry["threat"])].append(entry)
    out = []
    for (attack, threat), entries in groups.items():
        ok = [e for e in entries if e["status"] == "ok"]
        item: dict[str, Any] = {"attack": attack, "threat": threat,
                                "scorer": entries[0]["scorer"],
                                "status": "ok" if ok else entries[0]["status"],
                                "reason": None if ok else entries[0].get("reason",
                                                                         entries[0].get("error")),
                                "targets": sorted({t for e in ok for t in e.get("targets", [])})}
        if not ok and entries[0].get("blocked_by") is not None:  # recorded by the cell
            item["blocked_by"] = entries[0]["blocked_by"]
        if ok:
            names = [k for k, v in ok[0]["scores"].items() if isinstance(v, (int, float))
                     or v is None]
            item["metrics"] = {k: mean_ci((e["scores"].get(k) for e in ok), metric_range(k))
                               for k in names}
            item.update(convergence_over_seeds(ok))
        out.append(item)
    return out


def run_privacy(cells: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A configuration's accountant figures, from its first successful run (every seed of a
    configuration declares the same noise); None when no run succeeded.

    Examples
    --------
    >>> run_privacy([{"status": "ok", "privacy": {"epsilon": 2.0, "delta": 1e-5,
    ...                                            "noised": True}}])
    {'epsilon': 2.0, 'delta': 1e-05, 'noised': True, 'reason': None, 'trusted': []}
    """
    for cell in cells:
        privacy = cell.get("privacy") if cell.get("status") == "ok" else None
        if isinstance(privacy, Mapping):
            return {"epsilon": privacy.get("epsilon"), "delta": privacy.get("delta"),
                    "noised": bool(privacy.get("noised")), "reason": privacy.get("reason"),
                    "trusted": list(privacy.get("trusted") or [])}
    return None


def convergence_over_seeds(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Whether an attack converged on every seed (None: some run did not say), why its runs
    stopped, and whether more budget would likely have helped one of them.

    Examples
    --------
    >>> runs = [{"convergence": {"stopped": "converged", "converged": True}},
    ...         {"convergence": {"stopped": "budget", "converged": False,
    ...                          "more_budget_helps": True}}]
    >>> convergence_over_seeds(runs)
    {'converged': False, 'stopped': ['budget', 'converged'], 'more_budget_helps': True}
    >>> convergence_over_seeds([{}])["converged"] is None
    True
    """
    records = [e.get("convergence") or {} for e in entries]
    flags = [r.get("converged") for r in records]
    converged = (False if any(f is False for f in flags)
                 else True if flags and all(f is True for f in flags) else None)
    return {"converged": converged,
            "stopped": sorted({str(r.get("stopped", "not reported")) for r in records}),
            "more_budget_helps": any(r.get("more_budget_helps") is True for r in records)}
