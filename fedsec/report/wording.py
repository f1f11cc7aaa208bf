"""What an attack recovered, in words, and how harmful that is.

One place decides the words of every finding (the verdict list and the CLI's summary, the
headlines, the worst leak): the level of leakage (:func:`level`, at the advantage's printed
precision), what was recovered (:func:`recovered`, from the scorer's ``recovers`` template and
what it measured) and the sentence's head (:func:`finding`). What a scorer measured (records,
a column space, an aggregate, labels, membership: :func:`measured`) also ranks results by harm
(:func:`leak_rank`): individual records before subspaces before aggregates, labels and
membership, then by advantage.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.errors import ValidationError
from fedsec.private_store import parse_truth_key
from fedsec.report.aggregate import LEAKAGE
from fedsec.report.precision import printed_advantage
from fedsec.report.ranges import words

#: Levels of leakage, worst first, with the (printed) advantage each starts at.
THRESHOLDS = (("exact", 0.9), ("large", 0.5), ("partial", 0.1), ("none", -0.1),
              ("worse", -math.inf))
#: Levels at which an attack is at (or below) its naive baseline: stopped.
STOPPED = frozenset({"none", "worse", "unidentifiable", "nothing"})
#: What a scorer can have measured, the most harmful first.
MEASURES = ("records", "subspace", "aggregate", "labels", "membership")
#: Harm of each measure: 0 is the worst (individual records).
HARM = {"records": 0, "subspace": 1, "aggregate": 2, "labels": 2, "membership": 2}
#: Each measure in words, for a count of results ("3 other results recover ...").
MEASURE_WORDS = {"records": "individual records", "subspace": "a column space",
                 "aggregate": "an aggregate", "labels": "labels", "membership": "membership"}
#: What a scorer reads (its declared ``reads``) says of what it measured; "values" do not
#: tell (a party's vector, a Gram block): its targets do.
_READS = {"basis": "subspace", "labels": "labels", "rows": "records",
          "unordered-rows": "records", "binary-columns": "records", "sequences": "records"}
#: What the last part of a ground-truth key names, in words.
_NOUNS = {"X": "records", "y": "labels", "gram": "Gram matrix"}
#: A party's value that is a model or weights rather than its records.
_MODELS = ("weight", "model", "local_w", "global_w")

FIRST = {
    "exact": "recovers (nearly) exactly {what}",
    "large": "recovers a large part of {what}",
    "partial": "recovers part of {what}, beyond the naive baseline",
    "inconclusive": ("stays at the naive baseline on {what} without converging (inconclusive: "
                     "a stronger run may recover more)"),
    "none": "learns nothing about {what} beyond the naive baseline",
    "worse": "does worse on {what} than the naive baseline (it learns nothing)",
    "unidentifiable": "recovers nothing identifiable of {what}",
    "nothing": "finds nothing to attack",
}
AGAIN = {
    "exact": "recovers them (nearly) exactly", "large": "recovers a large part of them",
    "partial": "recovers a part of them",
    "inconclusive": "stays at the naive baseline on them without converging (inconclusive)",
    "none": "learns nothing about them beyond the naive baseline",
    "worse": "does worse on them than the naive baseline",
    "unidentifiable": "recovers nothing identifiable of them",
    "nothing": "finds nothing to attack",
}


def level(advantage: float | None, n_targets: int) -> str:
    """The level of leakage an advantage over the naive baseline stands for, at the
    precision the report prints it (0.899 prints 0.90: exact).

    Examples
    --------
    >>> level(0.97, 2), level(0.3, 2), level(0.0, 2), level(-0.8, 2), level(None, 2)
    ('exact', 'partial', 'none', 'worse', 'unidentifiable')
    >>> level(0.8999, 2)
    'exact'
    """
    if not n_targets:
        return "nothing"
    if advantage is None:
        return "unidentifiable"
    shown = printed_advantage(advantage)
    return next(name for name, start in THRESHOLDS if shown >= start)


def advantage_of(entry: Mapping[str, Any]) -> float | None:
    """An aggregated attack entry's mean advantage (None: not scored)."""
    value = entry.get("metrics", {}).get(LEAKAGE, {}).get("mean")
    return None if value is None else float(value)


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


def measured(template: str, targets: Sequence[str], declared: str | None = None,
             reads: Sequence[str] = ()) -> str:
    """What a scorer measured of its targets: one of :data:`MEASURES`.

    ``declared`` (a scorer's own ``measures``, when it states one) wins; then the kinds of
    estimate it ``reads`` when they agree (a basis is a column space, rows are records);
    then its ``recovers`` template (a column space, label counts, membership), then the most
    harmful of its targets: a party's records, labels or model, or an outcome of the run (an
    aggregate such as a Gram matrix). A plug-in's own target name counts as records.

    Examples
    --------
    >>> measured("the column space of {what}", ["party/p1/shard/cell0/X"])
    'subspace'
    >>> measured("{what}", ["outcome/gram/total"]), measured("{what}", ["party/p1/shard/c/X"])
    ('aggregate', 'records')
    >>> measured("{what}", ["party/c1/value/local_W"]), measured("{what}", ["party/c/shard/c/y"])
    ('aggregate', 'labels')
    >>> measured("{what}", ["party/p1/shard/c/X"], reads=["basis"])
    'subspace'
    """
    if declared in HARM:
        return str(declared)
    kinds = {_READS.get(kind) for kind in reads}
    if len(kinds) == 1 and None not in kinds:
        return str(kinds.pop())
    text = template.lower()
    if "column space" in text or "subspace" in text:
        return "subspace"
    if "membership" in text:
        return "membership"
    if "label" in text:
        return "labels"
    return min((_target_kind(t) for t in targets), key=HARM.__getitem__, default="records")


def _target_kind(target: str) -> str:
    try:
        parsed = parse_truth_key(target)
    except ValidationError:
        return "records"
    if parsed.party is None:
        return "aggregate"
    last = parsed.path[-1].lower()
    if last == "y" or "label" in last:
        return "labels"
    if any(word in last for word in _MODELS) or last == "w":
        return "aggregate"
    return "records"


def measures_of(entry: Mapping[str, Any]) -> str:
    """What an attack entry's scorer measured (its ``measures``, recorded by the report, or
    worked out from its template and targets)."""
    found = entry.get("measures")
    if found in HARM:
        return str(found)
    return measured(str(entry.get("recovers") or "{what}"), entry.get("targets", []))


def recovered(entry: Mapping[str, Any]) -> str:
    """What an attack entry recovered, in words: its targets through its scorer's template.

    Examples
    --------
    >>> recovered({"targets": ["party/p2/shard/cell0/X"], "recovers": "the column space of "
    ...            "{what}"})
    'the column space of the data of p2'
    """
    return what(entry.get("targets", []), str(entry.get("recovers") or "{what}"),
                measures_of(entry))


def finding(entry: Mapping[str, Any]) -> str:
    """The head of a sentence about one attack entry: its level and what it recovered.

    Examples
    --------
    >>> finding({"targets": ["party/h1/shard/cell0/X"], "converged": True,
    ...          "metrics": {"advantage": {"mean": 0.999}}})
    'recovers (nearly) exactly the records of h1'
    """
    return FIRST[verdict_level(entry)].format(what=recovered(entry))


def harm(entry: Mapping[str, Any]) -> int:
    """How harmful what the entry's scorer measured is: 0 (records) is the worst."""
    return HARM[measures_of(entry)]


def leak_rank(entry: Mapping[str, Any]) -> tuple[int, int, float]:
    """Sort key of an attack entry, the worst first: a leak (a gain over the baseline)
    before any other result, then by harm, then by the printed advantage.

    Examples
    --------
    >>> gram = {"targets": ["outcome/gram/total"], "converged": True,
    ...         "metrics": {"advantage": {"mean": 0.99999999996}}}
    >>> rows = {**gram, "targets": ["party/h1/shard/cell0/X"],
    ...         "metrics": {"advantage": {"mean": 0.64}}}
    >>> sorted([gram, rows], key=leak_rank)[0] is rows
    True
    """
    adv = advantage_of(entry)
    found = verdict_level(entry)
    shown = -math.inf if adv is None else printed_advantage(adv)
    if found in STOPPED or found == "inconclusive":
        return (1, 0, -shown)
    return (0, harm(entry), -shown)


def what(targets: Sequence[str], template: str = "{what}", measures: str | None = None) -> str:
    """What a set of ground-truth keys is, in words, through a scorer's ``recovers`` template
    (a column space is "of the data", never "of the records": the records were not recovered).

    Examples
    --------
    >>> what(["party/h1/shard/cell0/X", "party/h2/shard/cell0/X", "outcome/gram/total"])
    'the records of h1 and h2 and the total Gram matrix'
    >>> what(["party/w1/shard/cell0/X"], "the column space of {what}")
    'the column space of the data of w1'
    """
    if measures is None:
        measures = measured(template, targets)
    nouns = {**_NOUNS, "X": "data"} if measures == "subspace" else _NOUNS
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
            noun, owner = nouns.get(path[0], path[0]), "/".join(path[1:])
            if owner == "total":
                noun, owner = f"total {noun}", ""
        else:
            owner = parsed.party
            noun = (nouns.get(path[-1], path[-1]) if path[0] == "shard"
                    else " ".join(path[1:] if path[0] == "value" else path))
        if owner not in owners[noun]:
            owners[noun].append(owner)
    text = words([f"the {noun.replace('_', ' ')}" + (f" of {words(sorted(names))}"
                                                     if any(names) else "")
                  for noun, names in owners.items()] + raw) or "no target"
    return template.format(what=text)
