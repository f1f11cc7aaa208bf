"""Privacy regression gates: ``--fail-if "leakage.METRIC OP VALUE"`` on what attacks
recovered, ``--fail-if "privacy.epsilon OP VALUE"`` on what the accountant states.

A privacy gate reads each run's ``privacy`` block (:mod:`fedsec.privacy.accountant`): runs
whose defences add no noise claim nothing and are not checked; a run whose defence adds noise
but states no epsilon (it relies on no sensitivity bound) counts as epsilon infinite.

Two privacy figures come from an attack rather than the accountant: ``privacy.
empirical_epsilon``, the one-run lower bound an adversary's canary guesses give
(:mod:`fedsec.scoring.canaries`), and ``privacy.empirical_excess``, that bound minus the
run's accountant epsilon, per adversary, in runs that state one. ``--fail-if
"privacy.empirical_excess > 0"`` fails an audit in which some adversary proves more leakage
than the accountant allows: a bug in a defence or in what it declares."""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fedsec.errors import ValidationError
from fedsec.privacy.mechanism import trusted_among

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
#: What every scorer's summary may carry besides the metrics its glossary defines; the
#: advantage is the one metric every report reads.
SHARED_METRICS = frozenset({"advantage", "n_targets", "epsilon"})
#: The accountant's figures a ``privacy.`` gate reads.
PRIVACY_METRICS = frozenset({"epsilon", "epsilon_rdp", "delta", "empirical_epsilon",
                             "empirical_excess"})
#: The privacy figures an attack measures (per adversary), not the accountant.
EMPIRICAL_METRICS = frozenset({"empirical_epsilon", "empirical_excess"})
_PATTERN = re.compile(r"^\s*(leakage|privacy)\.([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<|>)\s*"
                      r"([-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class Gate:
    """A threshold on one leakage metric (crossed when any attack in any run satisfies it) or,
    with ``source`` ``"privacy"``, on the accountant's epsilon of any run."""

    metric: str
    op: str
    value: float
    source: str = "leakage"

    @classmethod
    def parse(cls, text: str) -> Gate:
        """Parse ``leakage.advantage > 0.5``.

        Examples
        --------
        >>> Gate.parse("leakage.fraction_recovered >= 0.1")
        Gate(metric='fraction_recovered', op='>=', value=0.1, source='leakage')
        >>> Gate.parse("privacy.epsilon > 8")
        Gate(metric='epsilon', op='>', value=8.0, source='privacy')
        """
        match = _PATTERN.match(text)
        if not match:
            raise ValidationError(
                f"--fail-if {text!r} is not of the form 'leakage.METRIC OP NUMBER' or "
                "'privacy.epsilon OP NUMBER' with OP one of <, <=, >, >= (for example "
                "'leakage.advantage > 0.5')."
            )
        source, metric = match.group(1), match.group(2)
        if source == "privacy" and metric not in PRIVACY_METRICS:
            close = difflib.get_close_matches(metric, sorted(PRIVACY_METRICS), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValidationError(f"--fail-if {text!r}: a run's privacy has no {metric!r}.{hint} "
                                  f"It has: {', '.join(sorted(PRIVACY_METRICS))}.")
        return cls(metric, match.group(3), float(match.group(4)), source)

    def __str__(self) -> str:
        return f"{self.source}.{self.metric} {self.op} {self.value:g}"

    def _values(self, cells: Iterable[Mapping[str, Any]]
                ) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any], float]]:
        """``(cell, attack, value)`` for every finite value of the metric that an attack
        measured in a successful run (for a privacy gate: ``(cell, {}, value)`` for every
        successful run whose defences add noise)."""
        if self.source == "privacy":
            yield from _privacy_values(self.metric, cells)
            return
        for cell in cells:
            for attack in cell.get("attacks", []):
                value = attack.get("scores", {}).get(self.metric) if attack["status"] == "ok" \
                    else None
                if isinstance(value, (int, float)) and math.isfinite(value):
                    yield cell, attack, float(value)

    def measured(self, cells: Iterable[Mapping[str, Any]]) -> list[float]:
        """Every finite value of the metric that an attack measured in a successful run."""
        return [value for _, _, value in self._values(cells)]

    def crossings(self, cells: Iterable[Mapping[str, Any]]) -> list[str]:
        """Readable lines for every (run, attack) whose metric crosses the threshold."""
        if self.source == "privacy":
            return [f"{cell['configuration']} seed {cell['config']['seed']}: "
                    f"{_by(attack)}privacy.{self.metric} = {_stated(value, cell)} {self.op} "
                    f"{self.value:g}{_against(attack, cell)}"
                    for cell, attack, value in _privacy_values(self.metric, cells)
                    if _OPS[self.op](value, self.value)]
        return [f"{cell['configuration']} seed {cell['config']['seed']}: {attack['attack']} as "
                f"{attack['threat']} has {self.metric} = {value:.4g} {self.op} {self.value:g}"
                for cell, attack, value in self._values(cells)
                if _OPS[self.op](value, self.value)]


def _privacy_values(metric: str, cells: Iterable[Mapping[str, Any]]
                    ) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any], float]]:
    """``(cell, {}, value)`` of a privacy metric for every successful run whose defences add
    noise; an epsilon the accountant could not state is infinite. An empirical metric gives
    ``(cell, attack, value)`` per attack that reported a bound (:func:`_empirical_values`)."""
    if metric in EMPIRICAL_METRICS:
        yield from _empirical_values(metric, cells)
        return
    for cell in cells:
        privacy = cell.get("privacy") if cell.get("status") == "ok" else None
        if not isinstance(privacy, Mapping) or not privacy.get("noised"):
            continue
        value = privacy.get(metric)
        if value is None and metric.startswith("epsilon"):
            value = math.inf
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and not math.isnan(value):
            yield cell, {}, float(value)


def _empirical_values(metric: str, cells: Iterable[Mapping[str, Any]]
                      ) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any], float]]:
    """``(cell, attack, value)`` for every attack of a successful run that reported an
    empirical bound: the bound itself, or (``empirical_excess``) the bound minus the run's
    accountant epsilon, only where the run states a finite one that holds against the attack's
    adversary (not one that includes a party the epsilon names trusted).

    Examples
    --------
    >>> cell = {"status": "ok", "privacy": {"noised": True, "epsilon": 2.0}, "attacks": [
    ...     {"status": "ok", "scores": {"empirical_epsilon": 2.5}}]}
    >>> [value for _, _, value in _empirical_values("empirical_excess", [cell])]
    [0.5]
    >>> cell["privacy"]["trusted"] = ["server"]
    >>> cell["attacks"][0]["threat"] = "server"
    >>> [value for _, _, value in _empirical_values("empirical_excess", [cell])]
    []
    """
    for cell in cells:
        if cell.get("status") != "ok":
            continue
        found = cell.get("privacy")
        privacy: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        stated = privacy.get("epsilon") if privacy.get("noised") else None
        for attack in cell.get("attacks", []):
            bound = attack.get("scores", {}).get("empirical_epsilon") \
                if attack.get("status") == "ok" else None
            if not isinstance(bound, (int, float)) or not math.isfinite(bound):
                continue
            if metric == "empirical_epsilon":
                yield cell, attack, float(bound)
            elif isinstance(stated, (int, float)) and math.isfinite(stated) \
                    and not trusted_among(privacy, str(attack.get("threat", ""))):
                yield cell, attack, float(bound) - float(stated)


def _by(attack: Mapping[str, Any]) -> str:
    return f"{attack['attack']} as {attack['threat']}: " if attack.get("attack") else ""


def _against(attack: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    """The figures an empirical crossing compares: its bound and the accountant's epsilon."""
    bound = attack.get("scores", {}).get("empirical_epsilon") if attack else None
    if bound is None:
        return ""
    stated = (cell.get("privacy") or {}).get("epsilon")
    accountant = "no epsilon stated" if stated is None else f"accountant epsilon {stated:.4g}"
    return f" (lower bound {bound:.4g}; {accountant})"


def _stated(value: float, cell: Mapping[str, Any]) -> str:
    if math.isfinite(value):
        return f"{value:.4g}"
    return f"infinite ({cell['privacy'].get('reason', 'no epsilon stated')})"


def declared_metrics(scorers: Iterable[type]) -> set[str] | None:
    """The metrics the scorers declare (their glossaries, each with its ``baseline_`` twin, and
    :data:`SHARED_METRICS`); None when one of them declares none (it is checked after the
    audit, against what it reported)."""
    known = set(SHARED_METRICS)
    for scorer in scorers:
        glossary = getattr(scorer, "glossary", None)
        if not glossary:
            return None
        known |= set(glossary) | {f"baseline_{name}" for name in glossary
                                  if name != "advantage"}
    return known


def check_gates(gates: Iterable[Gate], scorers: Iterable[type]) -> None:
    """Refuse, before anything runs, a gate on a metric none of ``scorers`` declares
    (:func:`declared_metrics`), suggesting the nearest.

    Examples
    --------
    >>> from fedsec import registry
    >>> scorers = [registry.get("scorer", "reconstruction-error")]
    >>> check_gates([Gate.parse("leakage.fraction_recovered > 0.5")], scorers)  # known: passes
    >>> try:
    ...     check_gates([Gate.parse("leakage.advantge > 0.5")], scorers)
    ... except ValidationError as error:
    ...     print("Did you mean 'advantage'?" in str(error))
    True
    """
    known = declared_metrics(list(scorers))
    if known is None:
        return
    for gate in gates:
        if gate.source == "leakage" and gate.metric not in known:
            _unknown(gate, known)


def _unknown(gate: Gate, known: set[str]) -> None:
    close = difflib.get_close_matches(gate.metric, sorted(known), n=2)
    hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
    raise ValidationError(f"--fail-if '{gate}': the audit's scorers report no metric "
                          f"{gate.metric!r}.{hint} They report: {', '.join(sorted(known))}.")


def reported_metrics(cells: Iterable[Mapping[str, Any]]) -> set[str]:
    """The numeric leakage metrics the audit's scorers produced."""
    return {name for cell in cells for attack in cell.get("attacks", [])
            if attack["status"] == "ok"
            for name, value in attack.get("scores", {}).items()
            if (isinstance(value, (int, float)) and not isinstance(value, bool)) or value is None}


def failures(cells: Iterable[Mapping[str, Any]]) -> list[str]:
    """Readable lines for every run that failed and every attack that raised an error."""
    out = []
    for cell in cells:
        where = f"{cell['configuration']} seed {cell['config']['seed']}"
        if cell["status"] != "ok":
            out.append(f"run failed: {where}: {cell.get('error')}")
            continue
        for attack in cell.get("attacks", []):
            if attack["status"] == "error":
                out.append(f"attack failed: {where}: {attack['attack']} as {attack['threat']}: "
                           f"{attack.get('error')}")
    return out


def evaluate(gates: Iterable[Gate], cells: Sequence[Mapping[str, Any]]) -> tuple[bool, list[str]]:
    """Whether the audit fails its gates, and why (one line each).

    An audit fails when a run or an attack failed, when a gate is crossed, or when a gate
    measured nothing (no successful attack reported its metric): a gate that checks nothing
    must not pass. A gate on a metric none of the audit's scorers produces is a usage error.

    Examples
    --------
    >>> cell = {"configuration": "c", "config": {"seed": 0}, "status": "ok", "attacks": [
    ...     {"attack": "a", "threat": "t", "status": "ok", "scores": {"advantage": 0.9}}]}
    >>> evaluate([Gate.parse("leakage.advantage > 0.5")], [cell])
    (True, ['threshold crossed: c seed 0: a as t has advantage = 0.9 > 0.5'])
    >>> evaluate([Gate.parse("leakage.advantage > 0.95")], [cell])
    (False, [])
    """
    lines = failures(cells)
    known = reported_metrics(cells)
    for gate in gates:
        if gate.source == "leakage" and known and gate.metric not in known:
            _unknown(gate, known)
        if not gate.measured(cells):
            why = ("no attack reported an empirical bound (canary-guess with canary-epsilon) "
                   "in a run that states an epsilon" if gate.metric in EMPIRICAL_METRICS
                   else "no run's defences add noise, so no run claims an epsilon"
                   if gate.source == "privacy" else
                   "every attack failed, did not apply, or scored NaN")
            lines.append(f"gate measured nothing: --fail-if '{gate}' found no value of "
                         f"{gate.metric!r} in any run ({why}), so it checked nothing")
        lines += [f"threshold crossed: {line}" for line in gate.crossings(cells)]
    return bool(lines), lines
