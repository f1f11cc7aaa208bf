"""The report's findings in words: per adversary, what each attack recovers under which
configurations (sweep values as ranges, the worst leak first), and per attack what stops it."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.errors import ValidationError
from fedsec.private_store import parse_truth_key
from fedsec.report.aggregate import LEAKAGE
from fedsec.report.ranges import defence_list, dimensions, phrase, universe_of, words

#: Levels of leakage, worst first, with the advantage each starts at.
THRESHOLDS = (("exact", 0.9), ("large", 0.5), ("partial", 0.1), ("none", -0.1),
              ("worse", -math.inf))
#: Beyond this many boxes a set of configurations is counted, not described.
MAX_BOXES = 6
#: What the last part of a ground-truth key names, in words.
_NOUNS = {"X": "records", "y": "labels", "gram": "Gram matrix"}
_ORDER = (["exact", "large", "partial", "inconclusive"] + [name for name, _ in THRESHOLDS[3:]]
          + ["unidentifiable", "nothing"])
#: Levels at which an attack is at (or below) its naive baseline: stopped.
STOPPED = frozenset({"none", "worse", "unidentifiable", "nothing"})

_FIRST = {
    "exact": "recovers {what} (nearly) exactly",
    "large": "recovers a large part of {what}",
    "partial": "recovers part of {what}, beyond the naive baseline",
    "inconclusive": ("stays at the naive baseline on {what} without converging (inconclusive: "
                     "a stronger run may recover more)"),
    "none": "learns nothing about {what} beyond the naive baseline",
    "worse": "does worse on {what} than the naive baseline (it learns nothing)",
    "unidentifiable": "recovers nothing identifiable of {what}",
    "nothing": "finds nothing to attack",
}
_AGAIN = {
    "exact": "recovers them (nearly) exactly", "large": "recovers a large part of them",
    "partial": "recovers a part of them",
    "inconclusive": "stays at the naive baseline on them without converging (inconclusive)",
    "none": "learns nothing about them beyond the naive baseline",
    "worse": "does worse on them than the naive baseline",
    "unidentifiable": "recovers nothing identifiable of them",
    "nothing": "finds nothing to attack",
}


def level(advantage: float | None, n_targets: int) -> str:
    """The level of leakage an advantage over the naive baseline stands for.

    Examples
    --------
    >>> level(0.97, 2), level(0.3, 2), level(0.0, 2), level(-0.8, 2), level(None, 2)
    ('exact', 'partial', 'none', 'worse', 'unidentifiable')
    """
    if not n_targets:
        return "nothing"
    if advantage is None:
        return "unidentifiable"
    return next(name for name, start in THRESHOLDS if advantage >= start)


def what(targets: Sequence[str], template: str = "{what}") -> str:
    """What a set of ground-truth keys is, in words, through a scorer's ``recovers`` template.

    Examples
    --------
    >>> what(["party/h1/shard/cell0/X", "party/h2/shard/cell0/X", "outcome/gram/total"])
    'the records of h1 and h2 and the total Gram matrix'
    >>> what(["party/w1/shard/cell0/X"], "the column space of {what}")
    'the column space of the records of w1'
    """
    owners: dict[str, list[str]] = defaultdict(list)
    raw: list[str] = []
    for target in targets:
        try:
            parsed = parse_truth_key(target)
        except ValidationError:  # a plug-in's own target name, shown as it is
            raw.append(target)
            continue
        path = parsed.path
        if parsed.party is None:
            noun, owner = _NOUNS.get(path[0], path[0]), "/".join(path[1:])
            if owner == "total":
                noun, owner = f"total {noun}", ""
        else:
            owner = parsed.party
            noun = (_NOUNS.get(path[-1], path[-1]) if path[0] == "shard"
                    else " ".join(path[1:] if path[0] == "value" else path))
        if owner not in owners[noun]:
            owners[noun].append(owner)
    text = words([f"the {noun.replace('_', ' ')}" + (f" of {words(sorted(names))}"
                                                     if any(names) else "")
                  for noun, names in owners.items()] + raw) or "no target"
    return template.format(what=text)


def headlines(configs: Sequence[Mapping[str, Any]],
              templates: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """One headline per adversary, the adversary with the worst leak first: per attack (the
    worst first), the configurations at each level of leakage as ranges, whether the masking
    backend changes anything, and where the attack does not apply."""
    templates = templates or {}
    universe = universe_of([dimensions(c["config"]) for c in configs])
    by_threat: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for (attack, threat), entries in _pairs(configs).items():
        worst, sentence = _attack_sentence(attack, entries, universe, templates)
        by_threat[threat].append((worst, sentence))
    out = []
    for threat, items in by_threat.items():
        items.sort(key=lambda item: -item[0])
        out.append({"adversary": threat, "worst": _finite(items[0][0]),
                    "sentences": [s for _, s in items]})
    out.sort(key=lambda h: -(h["worst"] if isinstance(h["worst"], float) else -math.inf))
    return out


def worst_leak(configs: Sequence[Mapping[str, Any]],
               templates: Mapping[str, str] | None = None) -> str | None:
    """The single worst leak of the audit in one sentence (None when nothing was measured)."""
    templates = templates or {}
    found = [(a["metrics"][LEAKAGE]["mean"], c, a) for c in configs for a in c["attacks"]
             if a["status"] == "ok" and a.get("metrics", {}).get(LEAKAGE, {}).get("mean")
             is not None]
    if not found:
        return None
    adv, config, attack = max(found, key=lambda item: item[0])
    ties = sum(1 for other, _, _ in found if f"{other:.2f}" == f"{adv:.2f}") - 1
    targets = attack.get("targets", [])
    text = _FIRST[level(adv, len(targets))].format(
        what=what(targets, templates.get(attack["scorer"], "{what}")))
    also = (f" ({ties} other result{'s' if ties > 1 else ''} of this audit reach the same "
            "advantage to two decimals)") if ties else ""
    return (f"{attack['threat']} {text} with {attack['attack']} (advantage {adv:.2f}) in "
            f"{config['configuration']}{also}.")


def what_stops(configs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per attack and adversary: the configurations (defences, settings) that bring it to its
    naive baseline, with their accuracy cost, those that do not, and where nothing does."""
    universe = universe_of([dimensions(c["config"]) for c in configs])
    lines = []
    for (attack, threat), entries in _pairs(configs).items():
        scored = [(c, a) for c, a in entries if a["status"] == "ok" and LEAKAGE in
                  a.get("metrics", {})]
        if not scored:
            continue
        levels = [(c, verdict_level(a)) for c, a in scored]
        stopped = [c for c, lv in levels if lv in STOPPED]
        unsure = [c for c, lv in levels if lv == "inconclusive"]
        leaking = [c for c, lv in levels if lv not in STOPPED and lv != "inconclusive"]
        name = f"{attack} as {threat}"
        if not leaking and not unsure:
            text = f"{name} stays at its naive baseline wherever it applies, and converged."
        elif not leaking and not stopped:
            text = (f"Nothing in this audit is shown to stop {name}: it stays at its naive "
                    "baseline but did not converge wherever it applies (inconclusive, not "
                    "evidence of protection).")
        elif not stopped:
            tried = frozenset(dimensions(c["config"])["defence"] for c in leaking) - {None}
            text = (f"Nothing in this audit stops {name}: it gains over its naive baseline in "
                    "every configuration where it applies"
                    + (" but those where it did not converge (below)" if unsure else "")
                    + (f", under {defence_list(tried)} too." if tried else "."))
        else:
            text = (f"{name} falls to its naive baseline, having converged, "
                    f"{_where(stopped, universe)}{_cost(stopped, leaking, configs)}"
                    + (f"; it still gains over it {_where(leaking, universe)}."
                       if leaking else "."))
        if unsure and (leaking or stopped):
            text += (f" It stays at its baseline without converging {_where(unsure, universe)}"
                     " (inconclusive, not evidence of protection).")
        lines.append(text + _not_applicable(entries, universe))
    return lines


def verdict_level(entry: Mapping[str, Any]) -> str:
    """An attack entry's level of leakage, with a failure that did not converge (or did not
    say) as ``inconclusive`` rather than a level at or below the baseline.

    Examples
    --------
    >>> entry = {"targets": ["t"], "metrics": {"advantage": {"mean": 0.0}}, "converged": None}
    >>> verdict_level(entry), verdict_level({**entry, "converged": True})
    ('inconclusive', 'none')
    >>> verdict_level({**entry, "metrics": {"advantage": {"mean": 0.95}}})
    'exact'
    """
    found = level(advantage_of(entry), len(entry.get("targets", [])))
    if found in STOPPED and found != "nothing" and entry.get("converged") is not True:
        return "inconclusive"
    return found


def _pairs(configs: Sequence[Mapping[str, Any]]
           ) -> dict[tuple[str, str], list[tuple[Mapping[str, Any], Mapping[str, Any]]]]:
    out: dict[tuple[str, str], list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for config in configs:
        for attack in config["attacks"]:
            out.setdefault((attack["attack"], attack["threat"]), []).append((config, attack))
    return dict(sorted(out.items()))


def _attack_sentence(attack: str, entries: Sequence[tuple[Mapping[str, Any],
                                                                       Mapping[str, Any]]],
                     universe: Mapping[str, Sequence[Any]],
                     templates: Mapping[str, str]) -> tuple[float, str]:
    ok = [(c, a) for c, a in entries if a["status"] == "ok"]
    if not ok:
        return -math.inf, (f"{attack} applies nowhere in this audit."
                           + _not_applicable(entries, universe))
    if any(LEAKAGE not in a.get("metrics", {}) for _, a in ok):
        return -math.inf, _check_sentence(attack, ok) + _not_applicable(entries, universe)
    template = templates.get(ok[0][1]["scorer"], "{what}")
    groups: dict[tuple[int, str], list[tuple[Mapping[str, Any], float | None]]] = \
        defaultdict(list)
    for config, entry in ok:
        adv = advantage_of(entry)
        rank = _ORDER.index(verdict_level(entry))
        groups[(rank, what(entry.get("targets", []), template))].append((config, adv))
    backend_inert = _backend_changes_nothing(ok)
    drop = ("backend",) if backend_inert else ()
    clauses, said = [], None
    for rank, recovered in sorted(groups):
        members = groups[(rank, recovered)]
        name = _ORDER[rank]
        head = _AGAIN[name] if recovered == said else _FIRST[name].format(what=recovered)
        said = recovered
        boxes = _boxes([c for c, _ in members], universe, drop=drop)
        where = (" " + boxes[0]) if len(boxes) == 1 else (": " + "; ".join(boxes))
        clauses.append(f"{head}{where}{_advantages([a for _, a in members])}.")
    sentence = f"With {attack}, it " + " It ".join(clauses)
    if backend_inert:
        backends = sorted({c["config"]["backend"] for c, _ in ok})
        sentence += (f" The masking backend changes nothing: {words(backends)} give the same "
                     "result.")
    found = [advantage_of(e) for _, e in ok]
    worst = max((a for a in found if a is not None), default=-1.0)
    return worst, sentence + _not_applicable(entries, universe)


def _check_sentence(attack: str, ok: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]
                    ) -> str:
    """A check that reports no advantage (such as epsilon-DR): the range of its metrics."""
    names = [k for k in ok[0][1].get("metrics", {}) if not k.startswith("baseline_")
             and k not in ("n_targets", "epsilon")]
    shown = []
    for key in names:
        values = [a["metrics"][key]["mean"] for _, a in ok if a["metrics"].get(key, {})
                  .get("mean") is not None]
        if values:
            shown.append(f"{key} {_span(values)}")
    return (f"With {attack} ({ok[0][1]['scorer']}, a check with no advantage score): "
            f"{', '.join(shown) or 'nothing measured'} over {len(ok)} configuration(s).")


def _backend_changes_nothing(ok: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> bool:
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


def _where(configs: Sequence[Mapping[str, Any]], universe: Mapping[str, Sequence[Any]],
           omit_whole: bool = False) -> str:
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


def _cost(stopped: Sequence[Mapping[str, Any]], leaking: Sequence[Mapping[str, Any]],
          configs: Sequence[Mapping[str, Any]]) -> str:
    """Accuracy where the attack is stopped: against the same configuration undefended, or
    against where it leaks."""
    undefended = {_without_defence(c): c for c in configs if c["config"].get("defense") is None}
    deltas = []
    for config in stopped:
        base = undefended.get(_without_defence(config))
        if config["config"].get("defense") is None or base is None:
            continue
        acc, acc0 = config["accuracy"]["mean"], base["accuracy"]["mean"]
        if acc is not None and acc0 is not None:
            deltas.append(acc - acc0)
    if deltas:
        return f" (accuracy change against no defence {_span(deltas, signed=True)})"
    there = [c["accuracy"]["mean"] for c in stopped if c["accuracy"]["mean"] is not None]
    elsewhere = [c["accuracy"]["mean"] for c in leaking if c["accuracy"]["mean"] is not None]
    if there and elsewhere:
        return f" (accuracy {_span(there)} there, {_span(elsewhere)} where it leaks)"
    return ""


def _without_defence(config: Mapping[str, Any]) -> tuple[Any, ...]:
    dims = dimensions(config["config"])
    dims.pop("defence")
    return tuple(dims.items())


def _not_applicable(entries: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
                    universe: Mapping[str, Sequence[Any]]) -> str:
    """Where the attack does not apply, grouped by the reason it gave."""
    by_reason: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for config, entry in entries:
        if entry["status"] == "not applicable":
            by_reason[str(entry.get("reason") or "").split("; it observed")[0]].append(config)
    shown = [_where(found, universe, omit_whole=True) + (f" ({reason})" if reason else "")
             for reason, found in by_reason.items()]
    return f" It does not apply {words(shown)}." if shown else ""


def _advantages(values: Sequence[float | None]) -> str:
    finite = [v for v in values if v is not None]
    return f" (advantage {_span(finite)})" if finite else ""


def _span(values: Sequence[float], signed: bool = False) -> str:
    fmt = "{:+.2f}" if signed else "{:.2f}"
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low} to {high}"


def advantage_of(entry: Mapping[str, Any]) -> float | None:
    """An aggregated attack entry's mean advantage (None: not scored)."""
    value = entry.get("metrics", {}).get(LEAKAGE, {}).get("mean")
    return None if value is None else float(value)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
