"""``fedsec inspect``: what a transcript holds and whether it is intact."""

from __future__ import annotations

import argparse
from typing import Any

from fedsec.cli.output import print_json, table
from fedsec.cost import human_bytes, summarize
from fedsec.transcript import read_transcript


def add_parser(sub: Any) -> None:
    p = sub.add_parser("inspect", help="counts, bytes and integrity of a transcript",
                       description="Summarize a transcript by party, tag and round and verify "
                                   "its integrity chain; exits 1 when it is not intact.")
    p.add_argument("transcript", help="path to a transcript.arrow file")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    transcript = read_transcript(args.transcript)
    report = transcript.verify()
    cost = summarize(transcript.messages)
    if args.json:
        print_json({"transcript": args.transcript, "header": dict(transcript.header),
                    "integrity": report.to_dict(), "cost": cost})
        return 0 if report.ok else 1
    header = transcript.header
    protocol = header.get("protocol", {}).get("name", "?")
    backend = header.get("backend", {}).get("name", "?")
    print(f"{args.transcript}: {protocol} with backend {backend}, seed {header.get('seed', '?')}, "
          f"{len(transcript)} messages, {human_bytes(cost['total']['bytes'])} on the wire")
    if header.get("backend", {}).get("insecure_simulation_keys"):
        print("keys were derived from the run's seed (simulation mode: reproducible, insecure)")
    print()
    print(table(((name, v["messages_sent"], v["bytes_sent"], v["messages_received"],
                  v["bytes_received"]) for name, v in cost["by_party"].items()),
                ("party", "sent", "bytes sent", "received", "bytes received")))
    print()
    print(table(((tag, v["messages"], v["bytes"]) for tag, v in cost["by_tag"].items()),
                ("tag", "messages", "bytes")))
    print()
    print(table(((r, v["messages"], v["bytes"]) for r, v in cost["by_round"].items()),
                ("round", "messages", "bytes")))
    print()
    print(f"integrity: {report.summary()}")
    return 0 if report.ok else 1
