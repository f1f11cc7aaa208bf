"""Plain-language verdicts: one sentence per attack in one configuration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fedsec.report.aggregate import LEAKAGE
from fedsec.report.headlines import level, verdict_level, what


def leak_level(advantage: float | None, targets: int) -> str:
    """Words for an attack's advantage over its naive baseline.

    Examples
    --------
    >>> leak_level(0.999, 3)
    'recovers (nearly) exactly'
    >>> leak_level(0.02, 3)
    'learns nothing beyond the naive baseline'
    >>> leak_level(-0.7, 3)
    'does worse than the naive baseline (learns nothing)'
    """
    return _WORDS[level(advantage, targets)]


_WORDS = {
    "exact": "recovers (nearly) exactly", "large": "recovers a large part",
    "partial": "gains partially over the naive baseline",
    "none": "learns nothing beyond the naive baseline",
    "worse": "does worse than the naive baseline (learns nothing)",
    "unidentifiable": "recovers nothing identifiable", "nothing": "recovers nothing",
}


def attack_verdict(attack: Mapping[str, Any]) -> str:
    """One sentence for one attack in one configuration (None-safe)."""
    metrics = attack.get("metrics", {})
    if LEAKAGE not in metrics:  # a check rather than an attack score (e.g. epsilon-DR)
        shown = ", ".join(f"{k} {v['mean']:.3g}" for k, v in metrics.items()
                          if v.get("mean") is not None)
        return f"{attack['threat']}, {attack['attack']}: {shown}."
    adv = metrics[LEAKAGE].get("mean")
    words = leak_level(adv, len(attack.get("targets", [])))
    adv_text = "n/a" if adv is None else f"{adv:.2f}"
    unsure = (" It did not converge: inconclusive, not evidence of protection."
              if verdict_level(attack) == "inconclusive" else "")
    return (f"{attack['threat']} {words} ({what(attack.get('targets', []))}) with "
            f"{attack['attack']}, advantage {adv_text}.{unsure}")
