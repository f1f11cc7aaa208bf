"""``fedsec list``: registered protocols, backends, attacks, defences, scorers and datasets."""

from __future__ import annotations

import argparse
from typing import Any

from fedsec.builtin_index import COMPONENTS
from fedsec.cli.output import print_json
from fedsec.errors import UnknownNameError

PLURALS = {"protocols": "protocol", "backends": "backend", "attacks": "attack",
           "defenses": "defense", "defences": "defense", "scorers": "scorer",
           "datasets": "dataset"}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("list", help="list registered components",
                       description="List protocols, backends, attacks, defences, scorers and "
                                   "datasets with what each declares.")
    p.add_argument("kind", nargs="?", help="one kind: " + ", ".join(sorted(
        {"protocols", "backends", "attacks", "defenses", "scorers", "datasets"})))
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    kinds = [*COMPONENTS, "dataset"]  # the component kinds, then datasets
    if args.kind is not None:
        kind = PLURALS.get(args.kind, args.kind)
        if kind not in kinds:
            raise UnknownNameError("kind", args.kind, [*PLURALS, *kinds])
        kinds = [kind]
    entries = {kind: _entries(kind) for kind in kinds}
    if args.json:
        print_json(entries if args.kind is None else entries[kinds[0]])
        return 0
    for kind, items in entries.items():
        print(f"{kind}s:")
        width = max((len(i["name"]) for i in items), default=0)
        for item in items:
            print(f"  {item['name'].ljust(width)}  {item['summary']}")
        print()
    return 0


def _entries(kind: str) -> list[dict[str, Any]]:
    if kind == "dataset":
        from fedsec.data import dataset_names, dataset_options
        from fedsec.data.registry import SUMMARIES

        out = []
        for name in dataset_names():
            options = dataset_options(name)
            summary = SUMMARIES.get(name, "")
            if options:
                summary += " Options: " + ", ".join(f"{k}={v!r}" for k, v in options.items())
            out.append({"kind": "dataset", "name": name, "summary": summary.strip(),
                        "options": options})
        return out
    from fedsec import registry  # imports the components it lists

    return registry.describe(kind)
