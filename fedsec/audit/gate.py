"""Privacy regression gates: ``--fail-if "leakage.METRIC OP VALUE"``."""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fedsec.errors import ValidationError

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
#: What every scorer's summary may carry besides the metrics its glossary defines; the
#: advantage is the one metric every report reads.
SHARED_METRICS = frozenset({"advantage", "n_targets", "epsilon"})
_PATTERN = re.compile(r"^\s*leakage\.([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class Gate:
    """A threshold on one leakage metric; crossed when any attack in any run satisfies it."""

    metric: str
    op: str
    value: float

    @classmethod
    def parse(cls, text: str) -> Gate:
        """Parse ``leakage.advantage > 0.5``.

        Examples
        --------
        >>> Gate.parse("leakage.fraction_recovered >= 0.1")
        Gate(metric='fraction_recovered', op='>=', value=0.1)
        """
        match = _PATTERN.match(text)
        if not match:
            raise ValidationError(
                f"--fail-if {text!r} is not of the form 'leakage.METRIC OP NUMBER' with OP one of "
                "<, <=, >, >= (for example 'leakage.advantage > 0.5')."
            )
        return cls(match.group(1), match.group(2), float(match.group(3)))

    def __str__(self) -> str:
        return f"leakage.{self.metric} {self.op} {self.value:g}"

    def _values(self, cells: Iterable[Mapping[str, Any]]
                ) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any], float]]:
        """``(cell, attack, value)`` for every finite value of the metric that an attack
        measured in a successful run."""
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
        return [f"{cell['configuration']} seed {cell['config']['seed']}: {attack['attack']} as "
                f"{attack['threat']} has {self.metric} = {value:.4g} {self.op} {self.value:g}"
                for cell, attack, value in self._values(cells)
                if _OPS[self.op](value, self.value)]


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
        if gate.metric not in known:
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
        if known and gate.metric not in known:
            _unknown(gate, known)
        if not gate.measured(cells):
            lines.append(f"gate measured nothing: --fail-if '{gate}' found no value of "
                         f"{gate.metric!r} in any run (every attack failed, did not apply, or "
                         "scored NaN), so it checked nothing")
        lines += [f"threshold crossed: {line}" for line in gate.crossings(cells)]
    return bool(lines), lines
