"""``fedsec describe``: a component's parameters with type, default, allowed values and meaning."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from fedsec.builtin_index import COMPONENTS
from fedsec.cli.list_cmd import PLURALS
from fedsec.cli.output import print_json, table

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.describe import ComponentInfo, ParamInfo

HEADERS = ("parameter", "type", "default", "allowed", "meaning")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("describe", help="a component's parameters",
                       description="Show a protocol's, backend's, attack's, defence's or "
                                   "scorer's parameters: type, default, allowed values and "
                                   "meaning, read from its Params class.")
    p.add_argument("name", help="a registered name (see `fedsec list`) or package.module:Class")
    p.add_argument("--kind", help="the kind, where a name is registered under several: "
                                  + ", ".join(COMPONENTS))
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from fedsec.describe import describe_component, find_component

    kind = None if args.kind is None else PLURALS.get(args.kind, args.kind)
    info = describe_component(*find_component(args.name, kind))
    if args.json:
        print_json(info.as_dict())
    else:
        print(render(info))
    return 0


def render(info: ComponentInfo) -> str:
    """The text form: a heading, the summary and paper, then one row per parameter."""
    lines = [f"{info.kind} {info.name!r} ({info.cls})"]
    lines += [text for text in (info.summary, info.paper and f"Paper: {info.paper}") if text]
    lines.append("")
    if not info.params:
        lines.append("No parameters.")
        return "\n".join(lines)
    rows = [(p.name, p.type, _default(p), p.allowed or "-", p.meaning) for p in info.params]
    lines.append(table(rows, HEADERS, left=len(HEADERS)))
    if info.defaults_refused:
        lines += ["", f"The defaults alone are refused: {info.defaults_refused}"]
    return "\n".join(lines)


def _default(param: ParamInfo) -> str:
    if param.required:
        return "required"
    value = param.default
    if isinstance(value, tuple | list):  # as given to --set: comma-separated
        return ",".join(map(str, value))
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, str) else str(value)
