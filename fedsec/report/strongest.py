"""The strongest attack per adversary: what protection means in a report.

One configuration protects its data from an adversary only when every attack that applies
to that adversary stayed at its naive baseline *and converged*: a failure of an attack that
stopped short of its optimum proves nothing. Per configuration and adversary,
:func:`strongest` keeps the worst result for the data over every attack that applies (a gain
over the baseline first, then the most harmful, individual records before a column space
before an aggregate, then the highest advantage as printed:
:func:`fedsec.report.wording.leak_rank`, as the report's worst leak) and gives one verdict:

* ``leaks``: the strongest attack gains over its naive baseline;
* ``protected``: every applicable attack converged and stayed at its baseline;
* ``inconclusive``: every attack stayed at its baseline, but one or more did not converge
  (or did not say whether it did);
* ``not applicable``: no attack applied to this adversary.

Per target (the party whose data, or the shared value, an attack reconstructs) it keeps
the worst attack for it among those that reconstruct something of it, ranked the same way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.errors import ValidationError
from fedsec.private_store import parse_truth_key
from fedsec.report.precision import show_advantage
from fedsec.report.wording import STOPPED, leak_rank, level
from fedsec.report.wording import advantage_of as _adv

VERDICTS = ("leaks", "inconclusive", "protected", "not applicable")
"""The verdicts of :func:`strongest`, worst first."""


def strongest(attacks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per adversary, the strongest of a configuration's attacks and the verdict it gives.

    ``attacks`` are a configuration's aggregated attack entries (``status``, ``threat``,
    ``metrics``, ``targets``, ``converged``).

    Examples
    --------
    >>> a = {"attack": "a", "threat": "server", "status": "ok", "targets": ["party/p/x"],
    ...      "metrics": {"advantage": {"mean": 0.02}}, "converged": True}
    >>> b = {**a, "attack": "b", "metrics": {"advantage": {"mean": 0.04}}, "converged": False}
    >>> row = strongest([a, b])[0]
    >>> row["attack"], row["verdict"], row["not_converged"]
    ('b', 'inconclusive', ['b'])
    >>> strongest([a])[0]["verdict"]
    'protected'
    """
    by_threat: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for entry in attacks:
        by_threat[entry["threat"]].append(entry)
    return [_row(threat, entries) for threat, entries in by_threat.items()]


def _row(threat: str, entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    scored = [e for e in entries if e["status"] == "ok" and _adv(e) is not None]
    tried = sorted({e["attack"] for e in entries if e["status"] == "ok"})
    if not scored:
        return {"threat": threat, "attack": None, "advantage": None, "level": None,
                "targets": [], "verdict": "not applicable", "attacks": tried,
                "not_converged": [], "by_target": {}}
    best = min(scored, key=leak_rank)
    found = level(_adv(best), len(best.get("targets", [])))
    unsure = sorted({e["attack"] for e in entries
                     if e["status"] == "ok" and e.get("converged") is not True})
    verdict = "leaks" if found not in STOPPED else "inconclusive" if unsure else "protected"
    return {"threat": threat, "attack": best["attack"], "advantage": _adv(best),
            "level": found, "targets": list(best.get("targets", [])), "verdict": verdict,
            "attacks": tried, "not_converged": unsure, "by_target": _by_target(scored)}


def _by_target(scored: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per target owner, the worst attack for it (:func:`leak_rank`) among those reaching it."""
    out: dict[str, dict[str, Any]] = {}
    for entry in sorted(scored, key=leak_rank):
        for owner in sorted({owner_of(t) for t in entry.get("targets", [])}):
            if owner not in out:
                out[owner] = {"attack": entry["attack"], "advantage": _adv(entry),
                              "converged": entry.get("converged")}
    return dict(sorted(out.items()))


def owner_of(target: str) -> str:
    """Whose data a ground-truth key names: the party, or the shared value's name.

    Examples
    --------
    >>> owner_of("party/hospital1/shard/cell0/X"), owner_of("outcome/gram/total")
    ('hospital1', 'gram/total')
    """
    try:
        parsed = parse_truth_key(target)
    except ValidationError:
        return target
    return parsed.party if parsed.party is not None else "/".join(parsed.path)


def summary_rows(configs: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """The report's table: one row per configuration and adversary."""
    rows = []
    for config in configs:
        for row in config.get("strongest", []):
            adv = row["advantage"]
            note = ""
            if row["not_converged"]:
                note = "did not converge: " + ", ".join(row["not_converged"])
            rows.append([config["configuration"], row["threat"], row["attack"] or "—",
                         "—" if adv is None else show_advantage(adv), row["verdict"], note])
    return rows


STRONGEST_HEAD = ["configuration", "adversary", "strongest attack", "advantage", "verdict",
                  "attacks that did not converge"]
