"""What the report adds to each aggregated attack entry from the components' declared data.

A cell records an attack's scores and, where it could not run, the reason it gave. The report
adds, per entry:

* ``recovers``: the scorer's template for what a high score means was recovered
  (``"the column space of {what}"``), and ``measures``: what the scorer measured (records, a
  column space, an aggregate, labels, membership; :func:`fedsec.report.wording.measured`,
  from the scorer's ``measures`` or ``reads`` where it declares them);
* for an attack that could not run, ``blocked_by``: ``"configuration"`` when the protocol
  does send the messages the attack reads (:meth:`Attack.applies_to`) but this configuration
  (the protocol variant's adversary, its backend, a defence, a setting) keeps them from the
  adversary, ``"protocol"`` when the protocol never sends them (the attack targets another
  protocol), None when the classes are not found and the audit does not tell. A cell that
  records ``blocked_by`` itself is taken at its word.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.report.wording import measured


def annotate(configs: Sequence[dict[str, Any]], attack_names: Sequence[str],
             base_dir: str) -> dict[str, Any]:
    """Add ``recovers``, ``measures`` and ``blocked_by`` to the configurations' attack
    entries (in place); return the scorer classes found, by name."""
    scorers = _classes("scorer", {a["scorer"] for c in configs for a in c["attacks"]},
                       base_dir)
    attacks = _classes("attack", set(attack_names), base_dir)
    protocols = _classes("protocol", {c["config"]["protocol"] for c in configs}, base_dir)
    for config in configs:
        for entry in config["attacks"]:
            scorer = scorers.get(entry["scorer"])
            entry["recovers"] = str(getattr(scorer, "recovers", "{what}"))
            entry["measures"] = measured(entry["recovers"], entry.get("targets", []),
                                         getattr(scorer, "measures", None),
                                         sorted(getattr(scorer, "reads", ())))
            if entry["status"] == "not applicable" and entry.get("blocked_by") is None:
                attack = attacks.get(attack_name(entry["attack"], attack_names) or "")
                protocol = protocols.get(config["config"]["protocol"])
                entry["blocked_by"] = blocked_by(attack, protocol, entry, config, configs)
    return scorers


def attack_name(label: str, names: Sequence[str]) -> str | None:
    """The scenario's attack name a label (``name[params]/scorer``) was made from.

    Examples
    --------
    >>> attack_name("learned-decoder[decoder=mlp]", ["learned-decoder", "learned"])
    'learned-decoder'
    >>> attack_name("pinv/epsilon-dr", ["pinv"]), attack_name("other", ["pinv"])
    ('pinv', None)
    """
    fitting = [n for n in names if label == n or label.startswith((f"{n}[", f"{n}/"))]
    return max(fitting, key=len, default=None)


def blocked_by(attack: Any, protocol: Any, entry: Mapping[str, Any],
               config: Mapping[str, Any], configs: Sequence[Mapping[str, Any]]) -> str | None:
    """Why an attack could not run in ``config``: ``"protocol"`` (the protocol never sends
    what it reads), ``"configuration"`` (it does, but not to this adversary here), or None.

    With the classes at hand their declared data decide; without them, an attack that runs in
    another configuration of the same protocol was blocked by this one's configuration.
    """
    if attack is not None and protocol is not None and hasattr(attack, "applies_to"):
        try:
            return "configuration" if attack.applies_to(protocol) else "protocol"
        except (AttributeError, TypeError):  # a plug-in without declared data
            pass
    runs = any(a["attack"] == entry["attack"] and a["threat"] == entry["threat"]
               and a["status"] == "ok" for c in configs
               if c["config"]["protocol"] == config["config"]["protocol"] for a in c["attacks"])
    return "configuration" if runs else None


def _classes(kind: str, names: set[str], base_dir: str) -> dict[str, Any]:
    """The classes registered (or found as ``module:Class``) under ``names``; those not found
    are left out."""
    from fedsec import registry
    from fedsec.errors import FedsecError

    out = {}
    for name in sorted(names):
        try:
            out[name] = registry.get(kind, name, search=(base_dir,))
        except (FedsecError, ImportError):
            continue
    return out
