"""Plain-language verdicts: one sentence per attack in one configuration (the report's
"Verdicts per configuration" and the summary ``fedsec audit`` prints), in the words of
:func:`fedsec.report.wording.finding`, the same as the headlines'."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fedsec.report.aggregate import LEAKAGE
from fedsec.report.precision import show_advantage
from fedsec.report.wording import advantage_of, finding


def attack_verdict(attack: Mapping[str, Any]) -> str:
    """One sentence for one attack in one configuration (None-safe).

    Examples
    --------
    >>> attack_verdict({"attack": "subspace-accumulation", "threat": "server",
    ...                 "targets": ["party/party2/shard/cell0/X"], "converged": True,
    ...                 "recovers": "the column space of {what}",
    ...                 "metrics": {"advantage": {"mean": 0.99999999993}}})
    'server recovers (nearly) exactly the column space of the data of party2 with \
subspace-accumulation (advantage 1.00).'
    """
    metrics = attack.get("metrics", {})
    if LEAKAGE not in metrics:  # a check rather than an attack score (e.g. epsilon-DR)
        shown = ", ".join(f"{k} {v['mean']:.3g}" for k, v in metrics.items()
                          if v.get("mean") is not None)
        return f"{attack['threat']}, {attack['attack']}: {shown}."
    adv = advantage_of(attack)
    adv_text = "n/a" if adv is None else show_advantage(adv)
    return f"{attack['threat']} {finding(attack)} with {attack['attack']} (advantage {adv_text})."
