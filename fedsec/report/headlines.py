"""The report's findings in words: per adversary, what each attack recovers under which
configurations (sweep values as ranges, the worst leak first), and the worst leak of the
audit. The words themselves come from :mod:`fedsec.report.wording`; what stops each attack
is :mod:`fedsec.report.stops`."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.report.aggregate import LEAKAGE
from fedsec.report.precision import printed_metric, show_advantage
from fedsec.report.ranges import dimensions, phrase, universe_of, words
from fedsec.report.wording import (
    AGAIN,
    FIRST,
    MEASURE_WORDS,
    THRESHOLDS,
    advantage_of,
    finding,
    leak_rank,
    level,
    measures_of,
    recovered,
    verdict_level,
)

#: Beyond this many boxes a set of configurations is counted, not described.
MAX_BOXES = 6
_ORDER = (["exact", "large", "partial", "inconclusive"] + [name for name, _ in THRESHOLDS[3:]]
          + ["unidentifiable", "nothing"])

Entries = Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]


def headlines(configs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One headline per adversary, the adversary with the worst leak first: per attack (the
    worst first, by :func:`~fedsec.report.wording.leak_rank`), the configurations at each
    level of leakage as ranges, whether the masking backend changes anything, and where the
    attack does not apply."""
    universe = universe_of([dimensions(c["config"]) for c in configs])
    by_threat: dict[str, list[tuple[tuple[Any, ...], float, str]]] = defaultdict(list)
    for (attack, threat), entries in pairs(configs).items():
        by_threat[threat].append(_attack_sentence(attack, entries, universe))
    ranked = []
    for threat, items in by_threat.items():
        items.sort(key=lambda item: item[0])
        worst = max((item[1] for item in items), default=-math.inf)
        ranked.append((items[0][0], {"adversary": threat,
                                     "worst": worst if math.isfinite(worst) else None,
                                     "sentences": [s for _, _, s in items]}))
    ranked.sort(key=lambda item: item[0])
    return [headline for _, headline in ranked]


def worst_leak(configs: Sequence[Mapping[str, Any]]) -> str | None:
    """The single worst leak of the audit in one sentence (None when nothing was measured):
    a gain over the baseline before any other result, then the most harmful (records before
    a column space before an aggregate, labels or membership), then the highest advantage as
    printed, then the configuration with the highest accuracy."""
    found = [(c, a) for c in configs for a in c["attacks"]
             if a["status"] == "ok" and advantage_of(a) is not None]
    if not found:
        return None
    config, attack = min(found, key=_worst_key)
    ties = sum(1 for item in found if _worst_key(item)[:3] == _worst_key((config, attack))[:3])
    ties -= 1
    also = (f" ({ties} other result{'s' if ties > 1 else ''} of this audit reach the same "
            f"advantage on {MEASURE_WORDS[measures_of(attack)]}, to two decimals)"
            if ties else "")
    accuracy = config["accuracy"].get("mean")
    shown = "" if accuracy is None else f", accuracy {printed_metric(accuracy):.3g}"
    return (f"{attack['threat']} {finding(attack)} with {attack['attack']} (advantage "
            f"{show_advantage(advantage_of(attack) or 0.0)}) in {config['configuration']}"
            f"{shown}{also}.")


def _worst_key(item: tuple[Mapping[str, Any], Mapping[str, Any]]) -> tuple[Any, ...]:
    config, attack = item
    accuracy = config["accuracy"].get("mean")
    return (*leak_rank(attack), math.inf if accuracy is None else -printed_metric(accuracy))


def pairs(configs: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[
        tuple[Mapping[str, Any], Mapping[str, Any]]]]:
    """Every (configuration, attack entry) by attack and adversary, in name order."""
    out: dict[tuple[str, str], list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for config in configs:
        for attack in config["attacks"]:
            out.setdefault((attack["attack"], attack["threat"]), []).append((config, attack))
    return dict(sorted(out.items()))


def _attack_sentence(attack: str, entries: Entries, universe: Mapping[str, Sequence[Any]]
                     ) -> tuple[tuple[Any, ...], float, str]:
    """The attack's sentence, its rank among the adversary's attacks and its highest
    advantage."""
    ok = [(c, a) for c, a in entries if a["status"] == "ok"]
    last = (2, 0, 0.0)
    if not ok:
        return last, -math.inf, (f"{attack} applies nowhere in this audit."
                                 + not_applicable(entries, universe))
    if any(LEAKAGE not in a.get("metrics", {}) for _, a in ok):
        return last, -math.inf, _check_sentence(attack, ok) + not_applicable(entries, universe)
    groups: dict[tuple[int, str], list[tuple[Mapping[str, Any], float | None]]] = \
        defaultdict(list)
    for config, entry in ok:
        rank = _ORDER.index(verdict_level(entry))
        groups[(rank, recovered(entry))].append((config, advantage_of(entry)))
    backend_inert = _backend_changes_nothing(ok)
    drop = ("backend",) if backend_inert else ()
    clauses, said = [], None
    for rank, what in sorted(groups):
        members = groups[(rank, what)]
        name = _ORDER[rank]
        head = AGAIN[name] if what == said else FIRST[name].format(what=what)
        said = what
        boxes = _boxes([c for c, _ in members], universe, drop=drop)
        where = (" " + boxes[0]) if len(boxes) == 1 else (": " + "; ".join(boxes))
        clauses.append(f"{head}{where}{_advantages([a for _, a in members])}.")
    sentence = f"With {attack}, it " + " It ".join(clauses)
    if backend_inert:
        backends = sorted({c["config"]["backend"] for c, _ in ok})
        sentence += (f" The masking backend changes nothing: {words(backends)} give the same "
                     "result.")
    found = [a for _, e in ok if (a := advantage_of(e)) is not None]
    worst = min(leak_rank(e) for _, e in ok)
    return worst, max(found, default=-math.inf), sentence + not_applicable(entries, universe)


def _check_sentence(attack: str, ok: Entries) -> str:
    """A check that reports no advantage (such as epsilon-DR): the range of its metrics."""
    names = [k for k in ok[0][1].get("metrics", {}) if not k.startswith("baseline_")
             and k not in ("n_targets", "epsilon")]
    shown = []
    for key in names:
        values = [a["metrics"][key]["mean"] for _, a in ok if a["metrics"].get(key, {})
                  .get("mean") is not None]
        if values:
            shown.append(f"{key} {span(values)}")
    return (f"With {attack} ({ok[0][1]['scorer']}, a check with no advantage score): "
            f"{', '.join(shown) or 'nothing measured'} over {len(ok)} configuration(s).")


def _backend_changes_nothing(ok: Entries) -> bool:
    """Whether configurations that differ only in their backend give the same result."""
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = defaultdict(list)
    for config, entry in ok:
        dims = dimensions(config["config"])
        dims.pop("backend")
        groups[tuple(dims.items())].append(entry)
    compared = [g for g in groups.values() if len(g) > 1]
    if not compared:
        return False
    for group in compared:
        levels = {(level(advantage_of(a), len(a.get("targets", []))), tuple(a.get("targets", [])))
                  for a in group}
        advs = [advantage_of(a) for a in group]
        finite = [a for a in advs if a is not None]
        if len(levels) > 1 or (finite and max(finite) - min(finite) > 0.05):
            return False
    return True


def where(configs: Sequence[Mapping[str, Any]], universe: Mapping[str, Sequence[Any]],
          omit_whole: bool = False) -> str:
    """Configurations in words, their boxes joined."""
    return "; ".join(_boxes(configs, universe, omit_whole=omit_whole))


def _boxes(configs: Sequence[Mapping[str, Any]], universe: Mapping[str, Sequence[Any]],
           drop: Sequence[str] = (), omit_whole: bool = False) -> list[str]:
    """The configurations as boxes in words (counted instead, beyond ``MAX_BOXES``)."""
    boxes = phrase([dimensions(c["config"]) for c in configs], universe, drop=drop,
                   omit_whole=omit_whole)
    if len(boxes) > MAX_BOXES:
        return [f"in {len(configs)} configurations scattered over the grid (see the Attacks "
                "table)"]
    return boxes


#: Why an attack could not run, by the entry's ``blocked_by``, as a sentence's head.
_BLOCKED = {
    "configuration": "Where the configuration keeps what it reads from {threat}, it cannot "
                     "run: {where}",
    "protocol": "It targets another protocol: it does not apply {where}",
    None: "It does not apply {where}",
}


def not_applicable(entries: Entries, universe: Mapping[str, Sequence[Any]],
                   kinds: Sequence[str | None] = ("configuration", "protocol", None),
                   also: Mapping[str, str] | None = None) -> str:
    """Where the attack does not apply, grouped by why (its configuration keeps the messages
    it reads from the adversary, or the protocol never sends them) and by the reason given;
    ``also`` adds a note after the configurations of each reason."""
    by_reason: dict[tuple[str | None, str], list[Mapping[str, Any]]] = defaultdict(list)
    threat = ""
    for config, entry in entries:
        if entry["status"] == "not applicable" and entry.get("blocked_by") in kinds:
            reason = str(entry.get("reason") or "").split("; it observed")[0].rstrip(".")
            by_reason[(entry.get("blocked_by"), reason)].append(config)
            threat = entry["threat"]
    out = []
    for kind in kinds:
        shown = [where(found, universe, omit_whole=True) + (f" ({reason})" if reason else "")
                 + (also or {}).get(reason, "")
                 for (k, reason), found in by_reason.items() if k == kind]
        if shown:
            out.append(" " + _BLOCKED[kind].format(where=words(shown), threat=threat) + ".")
    return "".join(out)


def _advantages(values: Sequence[float | None]) -> str:
    finite = [v for v in values if v is not None]
    return f" (advantage {span(finite)})" if finite else ""


def span(values: Sequence[float], signed: bool = False) -> str:
    """The range of values as printed (``0.90 to 1.00``; one value when they print alike)."""
    low, high = show_advantage(min(values), signed), show_advantage(max(values), signed)
    return low if low == high else f"{low} to {high}"
