"""What stops each attack: per attack and adversary, the protocol variants, backends and
defences under which it cannot run or falls to its naive baseline, each with its own cost.

A configuration stops an attack when the attack converged at (or below) its naive baseline
there, or when it cannot run there although the protocol sends what it reads (the
configuration keeps those messages from the adversary: ``blocked_by == "configuration"``,
:mod:`fedsec.report.annotate`). A failure that did not converge stops nothing: it is
inconclusive. An attack that does not apply because it targets another protocol is said so
apart, with the attacks that apply there instead.

Each stopping configuration is compared with the configuration where the attack still leaks
that differs from it in the fewest of protocol, backend and defence (the same dataset and
parameters; without a defence first): what differs is what stops it, and the difference in
accuracy (or in the protocol's error) is its cost. Stoppers whose costs print alike are
described together, as ranges.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.report.aggregate import LEAKAGE, utility
from fedsec.report.headlines import not_applicable, pairs, span, where
from fedsec.report.ranges import defence_list, dimensions, phrase, universe_of, words
from fedsec.report.wording import STOPPED, leak_rank, verdict_level

#: What a stopper can change (the rest, dataset and parameters, must match its reference).
PROTECTION = ("protocol", "backend", "defence")
_CONVERGED = "it falls to its naive baseline, having converged"

Config = Mapping[str, Any]


def what_stops(configs: Sequence[Config]) -> list[str]:
    """Per attack and adversary, one paragraph: what stops it (each stopper with its cost),
    where it still leaks, where it is inconclusive, and where it targets another protocol."""
    universe = universe_of([dimensions(c["config"]) for c in configs])
    lines = []
    for (attack, threat), entries in sorted(pairs(configs).items(), key=_worst_first):
        scored = [(c, a) for c, a in entries if a["status"] == "ok" and LEAKAGE in
                  a.get("metrics", {})]
        if not scored:
            continue
        levels = [(c, verdict_level(a)) for c, a in scored]
        unsure = [c for c, lv in levels if lv == "inconclusive"]
        leaking = [c for c, lv in levels if lv not in STOPPED and lv != "inconclusive"]
        stopping = [(c, _CONVERGED) for c, lv in levels if lv in STOPPED]
        stopping += [(c, "it cannot run: " + _reason(a)) for c, a in entries
                     if a["status"] == "not applicable" and a.get("blocked_by") == "configuration"]
        name = f"{attack} as {threat}"
        text = _head(name, leaking, unsure, stopping, universe, (attack, threat))
        if unsure and (leaking or stopping):
            text += (f" It stays at its baseline without converging {where(unsure, universe)}"
                     " (inconclusive, not evidence of protection).")
        if not leaking:  # nothing to compare with: where it cannot run, without a cost
            text += not_applicable(entries, universe, kinds=("configuration",))
        lines.append(text + not_applicable(entries, universe, kinds=("protocol", None),
                                           also=_instead(entries, (attack, threat))))
    return lines


def _head(name: str, leaking: Sequence[Config], unsure: Sequence[Config],
          stopping: Sequence[tuple[Config, str]], universe: Mapping[str, Sequence[Any]],
          pair: tuple[str, str]) -> str:
    converged = [c for c, how in stopping if how == _CONVERGED]
    if not leaking and not unsure:
        return f"{name} stays at its naive baseline wherever it applies, and converged."
    if not leaking and not converged:
        return (f"Nothing in this audit is shown to stop {name}: it stays at its naive "
                "baseline but did not converge wherever it applies (inconclusive, not "
                "evidence of protection).")
    if not stopping:
        tried = frozenset(dimensions(c["config"])["defence"] for c in leaking) - {None}
        return (f"Nothing in this audit stops {name}: it gains over its naive baseline in "
                "every configuration where it applies"
                + (" but those where it did not converge (below)" if unsure else "")
                + (f", under {defence_list(tried)} too." if tried else "."))
    if not leaking:
        return (f"{name} falls to its naive baseline, having converged, "
                f"{where(converged, universe)}.")
    clauses = stoppers(stopping, leaking, universe, pair)
    return (f"What stops {name}: {'; '.join(clauses)}. It still gains over its naive "
            f"baseline {where(leaking, universe)}.")


def stoppers(stopping: Sequence[tuple[Config, str]], leaking: Sequence[Config],
             universe: Mapping[str, Sequence[Any]], pair: tuple[str, str]) -> list[str]:
    """One clause per stopper: what it changes against where the attack leaks, where it
    holds, how it stops the attack, its own cost, and the attacks it lets in."""
    groups: dict[tuple[Any, ...], list[tuple[Config, Config | None]]] = defaultdict(list)
    for config, how in stopping:
        ref = reference(config, leaking)
        dims = () if ref is None else _differing(config, ref)
        ref_values = tuple(dimensions(ref["config"])[d] for d in dims) if ref else None
        stop_values = tuple(dimensions(config["config"])[d] for d in dims)
        groups[how, dims, ref_values, stop_values].append((config, ref))
    merged: dict[tuple[Any, ...], list[tuple[Config, Config | None]]] = defaultdict(list)
    for (how, dims, ref_values, _), members in groups.items():
        merged[(how, dims, ref_values, _cost(members, leaking))].extend(members)
    clauses = []
    for (how, dims, _, cost), members in sorted(merged.items(), key=_order):
        found = [c for c, _ in members]
        refs = [r for _, r in members if r is not None]
        what = _stopper(found, refs, dims, universe)
        let_in = _applies_instead(found, pair, refs)
        clauses.append(f"{what} ({how}{cost}{let_in})")
    return clauses


def reference(config: Config, leaking: Sequence[Config]) -> Config | None:
    """The configuration where the attack leaks that differs from ``config`` in the fewest
    of protocol, backend and defence, and in nothing else (one without a defence first)."""
    dims = dimensions(config["config"])
    fixed = {k: v for k, v in dims.items() if k not in PROTECTION}
    same = [r for r in leaking
            if {k: v for k, v in dimensions(r["config"]).items() if k not in PROTECTION} == fixed]
    if not same:
        return None
    return min(same, key=lambda r: (len(_differing(config, r)),
                                    r["config"].get("defense") is not None))


def _differing(config: Config, ref: Config) -> tuple[str, ...]:
    a, b = dimensions(config["config"]), dimensions(ref["config"])
    return tuple(d for d in PROTECTION if a[d] != b[d])


def _stopper(found: Sequence[Config], refs: Sequence[Config], dims: tuple[str, ...],
             universe: Mapping[str, Sequence[Any]]) -> str:
    """What the stopper changes, in words, and where it holds (the other dimensions)."""
    if not dims:  # no configuration to compare with: the configurations themselves
        return f"the configurations {where(found, universe)}"
    coords = [dimensions(c["config"]) for c in found]
    others = [d for d in universe if d not in dims]
    if dims == ("protocol",):
        mine = sorted({str(c["protocol"]) for c in coords})
        theirs = sorted({str(dimensions(r["config"])["protocol"]) for r in refs})
        head = f"choosing {words(mine, 'or')} over {words(theirs, 'or')}"
    elif dims == ("backend",):
        head = f"the {words(sorted({str(c['backend']) for c in coords}), 'or')} backend"
    elif dims == ("defence",):
        head = _defences(frozenset(c["defence"] for c in coords))
    else:
        head = "; ".join(phrase(coords, universe, drop=others))
    rest = "; ".join(phrase(coords, universe, drop=list(dims), omit_whole=True))
    return head if rest == "in every configuration" else f"{head}, {rest}"


def _cost(members: Sequence[tuple[Config, Config | None]], leaking: Sequence[Config]) -> str:
    """The stopper's own cost: its accuracy (or error) against where the attack leaks."""
    refs = [r for _, r in members if r is not None]
    if not refs:
        there = [u for c, _ in members if (u := _utility(c)) is not None]
        elsewhere = [u for c in leaking if (u := _utility(c)) is not None]
        if there and elsewhere:
            return f"; accuracy {span(there)} there, {span(elsewhere)} where it leaks"
        return ""
    name = next((found[0] for c, _ in members if (found := utility(c)) is not None),
                "accuracy")
    deltas = [u - v for c, r in members if r is not None
              and (u := _utility(c)) is not None and (v := _utility(r)) is not None]
    if not deltas:
        return ""
    against = _against(refs, _differing(members[0][0], refs[0]))
    if name == "accuracy":
        return f"; accuracy change {span(deltas, signed=True)} against {against}"
    low, high = f"{min(deltas):+.3g}", f"{max(deltas):+.3g}"
    return f"; {name} change {low if low == high else f'{low} to {high}'} against {against}"


def _against(refs: Sequence[Config], dims: tuple[str, ...]) -> str:
    """What a stopper is compared with, in words ("no defence", "plain", "fedcg-naive")."""
    parts = []
    for dim in dims:
        values = sorted({str(dimensions(r["config"])[dim]) for r in refs})
        if dim == "defence":
            parts.append(_defences(frozenset(dimensions(r["config"])["defence"] for r in refs)))
        elif dim == "backend":
            parts.append(f"the {words(values, 'or')} backend")
        else:
            parts.append(words(values, "or"))
    return ", ".join(parts)


def _defences(values: frozenset[Any]) -> str:
    """Defence values in words, None as "no defence" (which may stop an attack that a
    defence helps)."""
    named = defence_list(values)
    return words(["no defence"] * (None in values) + [named] * bool(named), "or")


def _utility(config: Config) -> float | None:
    found = utility(config)
    return None if found is None or found[1].get("mean") is None else float(found[1]["mean"])


def _applies_instead(found: Sequence[Config], pair: tuple[str, str],
                     refs: Sequence[Config] = ()) -> str:
    """The attacks of the same adversary that gain over their baseline in ``found`` (and
    could not run in ``refs``): what choosing these configurations lets in."""
    attack, threat = pair
    before = {a["attack"] for r in refs for a in r["attacks"]
              if a["threat"] == threat and a["status"] == "ok"}
    instead = sorted({a["attack"] for c in found for a in c["attacks"]
                      if a["threat"] == threat and a["attack"] != attack and a["status"] == "ok"
                      and verdict_level(a) not in STOPPED and verdict_level(a) != "inconclusive"}
                     - before)
    if not instead:
        return ""
    verb = "lets" if refs else "where"
    if verb == "lets":
        return f"; it lets {words(instead)} in"
    return f", where {words(instead)} appl{'ies' if len(instead) == 1 else 'y'} instead"


def _instead(entries: Sequence[tuple[Config, Mapping[str, Any]]],
             pair: tuple[str, str]) -> dict[str, str]:
    """Per reason the attack gave for not running, the attacks that apply there instead."""
    by_reason: dict[str, list[Config]] = defaultdict(list)
    for config, entry in entries:
        if entry["status"] == "not applicable":
            by_reason[str(entry.get("reason") or "").split("; it observed")[0].rstrip(".")
                      ].append(config)
    return {reason: _applies_instead(found, pair) for reason, found in by_reason.items()}


def _worst_first(item: tuple[tuple[str, str], Sequence[tuple[Config, Mapping[str, Any]]]]
                 ) -> tuple[Any, ...]:
    """The order of the paragraphs: the attack with the worst leak first, as the headlines."""
    (attack, threat), entries = item
    ranks = [leak_rank(a) for _, a in entries if a["status"] == "ok"]
    return (min(ranks, default=(2, 0, 0.0)), attack, threat)


def _reason(entry: Mapping[str, Any]) -> str:
    return str(entry.get("reason") or "no reason given").split("; it observed")[0].rstrip(".")


def _order(item: tuple[tuple[Any, ...], Any]) -> tuple[Any, ...]:
    (how, dims, ref_values, cost), _ = item
    return (how != _CONVERGED, len(dims) == 0, dims, str(ref_values), cost)
