"""Plain-language verdicts: what leaks, to whom, and which defence stopped it at what cost."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.errors import ValidationError
from fedsec.private_store import parse_truth_key
from fedsec.report.aggregate import LEAKAGE


def leak_level(advantage: float | None, targets: int) -> str:
    """Words for an attack's advantage over its naive baseline.

    Examples
    --------
    >>> leak_level(0.999, 3)
    'recovers (nearly) exactly'
    >>> leak_level(0.02, 3)
    'learns nothing beyond the naive baseline'
    """
    if not targets:
        return "recovers nothing"
    if advantage is None:
        return "recovers nothing identifiable"
    if advantage >= 0.9:
        return "recovers (nearly) exactly"
    if advantage >= 0.5:
        return "recovers a large part"
    if advantage >= 0.1:
        return "gains partially over the naive baseline"
    return "learns nothing beyond the naive baseline"


def _what(targets: Sequence[str]) -> str:
    owners = sorted({owner for owner in map(_owner, targets) if owner})
    if owners:
        return "the data of " + ", ".join(owners)
    return ", ".join(targets) if targets else "no target"


def _owner(target: str) -> str | None:
    try:
        return parse_truth_key(target).party
    except ValidationError:  # a plug-in's own target name: shown as it is
        return None


def attack_verdict(attack: Mapping[str, Any]) -> str:
    """One sentence for one attack in one configuration (None-safe)."""
    metrics = attack.get("metrics", {})
    if LEAKAGE not in metrics:  # a check rather than an attack score (e.g. epsilon-DR)
        shown = ", ".join(f"{k} {v['mean']:.3g}" for k, v in metrics.items()
                          if v.get("mean") is not None)
        return f"{attack['threat']}, {attack['attack']}: {shown}."
    adv = metrics[LEAKAGE].get("mean")
    level = leak_level(adv, len(attack.get("targets", [])))
    adv_text = "n/a" if adv is None else f"{adv:.2f}"
    return (f"{attack['threat']} {level} ({_what(attack.get('targets', []))}) with "
            f"{attack['attack']}, advantage {adv_text}.")


def key_findings(configs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per attack and adversary: the configurations at each level of leakage, in one line."""
    groups: dict[tuple[str, str], dict[str, list[str]]] = {}
    not_applicable: dict[tuple[str, str], dict[str, str]] = {}
    for config in configs:
        for attack in config["attacks"]:
            key = (attack["attack"], attack["threat"])
            if attack["status"] != "ok":
                protocol = config["config"]["protocol"]
                not_applicable.setdefault(key, {}).setdefault(protocol, attack.get("reason", ""))
                continue
            adv = attack.get("metrics", {}).get(LEAKAGE, {}).get("mean")
            level = leak_level(adv, len(attack.get("targets", [])))
            groups.setdefault(key, {}).setdefault(level, []).append(config["configuration"])
    lines = []
    for key in sorted(set(groups) | set(not_applicable)):
        attack, threat = key
        parts = [f"{level} in {len(labels)} configuration(s): {'; '.join(labels)}"
                 for level, labels in groups.get(key, {}).items()]
        parts += [f"does not apply to {protocol} ({reason})"
                  for protocol, reason in not_applicable.get(key, {}).items()]
        lines.append(f"{attack} as {threat} " + ". It ".join(parts) + ".")
    return lines


def defence_effects(configs: Sequence[Mapping[str, Any]]) -> list[str]:
    """For each defended configuration, how leakage and accuracy moved against no defence."""
    undefended = {_key(c): c for c in configs if c["config"].get("defense") is None}
    lines = []
    for config in configs:
        defense = config["config"].get("defense")
        if defense is None:
            continue
        base = undefended.get(_key(config))
        if base is None:
            continue
        name = defense["name"] + "".join(f" {k}={v}" for k, v in defense["params"].items())
        acc, acc0 = config["accuracy"]["mean"], base["accuracy"]["mean"]
        cost = (f"accuracy {acc0:.3f} -> {acc:.3f}" if acc is not None and acc0 is not None
                else "accuracy not measured")
        for attack in config["attacks"]:
            before = next((a for a in base["attacks"] if (a["attack"], a["threat"]) ==
                           (attack["attack"], attack["threat"])), None)
            if before is None or before["status"] != "ok":
                continue
            adv0 = before.get("metrics", {}).get(LEAKAGE, {}).get("mean")
            adv = (attack.get("metrics", {}).get(LEAKAGE, {}).get("mean")
                   if attack["status"] == "ok" else None)
            stopped = attack["status"] != "ok" or not attack.get("targets") or (
                adv is not None and adv < 0.1)
            effect = "stops" if stopped and (adv0 or 0) >= 0.1 else "does not stop"
            lines.append(f"{name} {effect} {attack['attack']} as {attack['threat']} on "
                         f"{_describe(base)} (advantage {_fmt(adv0)} -> {_fmt(adv)}; {cost}).")
    return lines


def _key(config: Mapping[str, Any]) -> tuple[Any, ...]:
    c = config["config"]
    return (c["protocol"], c.get("dataset", ""), c["backend"], tuple(sorted(c["params"].items())))


def _describe(config: Mapping[str, Any]) -> str:
    c = config["config"]
    params = ", ".join(f"{k}={v}" for k, v in c["params"].items())
    return f"{c['protocol']} ({c['backend']}{', ' + params if params else ''})"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
