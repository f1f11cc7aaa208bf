"""Printing helpers shared by the subcommands."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def print_json(data: Mapping[str, Any] | Sequence[Any]) -> None:
    """JSON on standard output."""
    from fedsec.results import json_default  # numpy and the result types, once there is output

    json.dump(data, sys.stdout, indent=2, sort_keys=True, default=json_default)
    sys.stdout.write("\n")


def table(rows: Iterable[Sequence[Any]], headers: Sequence[str], *, left: int = 1) -> str:
    """A plain aligned text table: the first ``left`` columns flush left, the others right."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in
                       enumerate(zip(row, widths, strict=True))).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
