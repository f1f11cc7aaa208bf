"""Privacy regression gates: ``--fail-if "leakage.METRIC OP VALUE"``."""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fedsec.errors import ValidationError

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
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

    def crossings(self, cells: Iterable[Mapping[str, Any]]) -> list[str]:
        """Readable lines for every (run, attack) whose metric crosses the threshold."""
        out = []
        for cell in cells:
            for attack in cell.get("attacks", []):
                value = attack.get("scores", {}).get(self.metric) if attack["status"] == "ok" \
                    else None
                if isinstance(value, (int, float)) and _OPS[self.op](value, self.value):
                    out.append(f"{cell['configuration']} seed {cell['config']['seed']}: "
                               f"{attack['attack']} as {attack['threat']} has {self.metric} = "
                               f"{value:.4g} {self.op} {self.value:g}")
        return out
