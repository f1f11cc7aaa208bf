"""``fedsec inspect``: what a transcript holds and whether it is intact.

The handler imports the transcript reader when it runs (see :mod:`fedsec.cli.main`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from fedsec.cli.output import print_json, table


def add_parser(sub: Any) -> None:
    p = sub.add_parser("inspect", help="counts, bytes and integrity of a transcript",
                       description="Summarize a transcript by party, tag and round and verify "
                                   "its integrity chain; exits 1 when it is not intact.")
    p.add_argument("transcript", help="path to a transcript.arrow file")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--verify-key", metavar="PUBLIC.pem",
                   help="also require a signature by this Ed25519 key (PEM) over the format, "
                        "header and end record (formats 1 and 2, which carry no seal, "
                        "are refused)")
    p.add_argument("--seeds", metavar="PRIVATE.npz",
                   help="also print the run's seed and secret seed from its private store "
                        "(the auditor's, beside the transcript) and check them against the "
                        "header's commitment: rerun with --seed and --secret-seed to reproduce "
                        "the run exactly")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from fedsec.cost import human_bytes
    from fedsec.transcript import check_file
    from fedsec.transcript.signing import load_verify_key

    key = None if args.verify_key is None else load_verify_key(args.verify_key)
    # one pass, one batch in memory at a time: the chain checked and the cost summed together,
    # both from the batches' columns
    verdict = check_file(args.transcript, verify_key=key, keep_messages=False, traffic=True)
    report, header = verdict.report, verdict.header
    if report is None or header is None:
        if args.json:
            print_json({"transcript": args.transcript, "status": verdict.status,
                        "integrity": {"ok": False, "status": verdict.status,
                                      "problems": [verdict.problem]}})
        else:
            print(f"{args.transcript}: {verdict.summary()}")
        return 1
    cost = verdict.traffic
    assert cost is not None  # asked for
    if args.json:
        print_json({"transcript": args.transcript, "status": verdict.status,
                    "header": dict(header), "integrity": report.to_dict(), "cost": cost})
        return 0 if verdict.ok else 1
    protocol = _field(header, "protocol", "name")
    backend = _field(header, "backend", "name")
    commitment = str(header.get("seed_commitment", "?"))[:16]
    print(f"{args.transcript}: {protocol} with backend {backend}, seed commitment {commitment}, "
          f"{report.n_messages} messages, {human_bytes(cost['total']['bytes'])} on the wire")
    if _field(header, "backend", "insecure_simulation_keys") is True:
        print("keys were derived from the run's secret seed (simulation mode: reproducible, "
              "insecure)")
    if _field(header, "backend", "insecure_key_size") is True:
        print("keys are of a test size (insecure_test_keys=true): insecure whatever their source")
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
    print(f"integrity: {verdict.summary()}")
    seeds_ok = True if args.seeds is None else _print_seeds(args.seeds, header)
    return 0 if verdict.ok and seeds_ok else 1


def _print_seeds(path: str, header: Mapping[str, Any]) -> bool:
    """Print the seeds a private store records and whether the header commits to them."""
    from fedsec.private_store import run_seeds
    from fedsec.seeding import seed_commitment

    seed, secret = run_seeds(path)
    if seed is None or secret is None:
        print(f"seeds: {path} records no secret seed (written outside a run, or by an older "
              "fedsec)")
        return False
    matches = seed_commitment(seed, secret) == header.get("seed_commitment")
    print(f"seeds: --seed {seed} --secret-seed {secret} "
          + ("(the header's commitment matches)" if matches else
             "(they do NOT match the header's commitment: this store is another run's)"))
    return matches


def _field(header: Mapping[str, Any], section: str, name: str) -> Any:
    """``header[section][name]``, or ``"?"`` when the header does not hold it."""
    value = header.get(section)
    return value.get(name, "?") if isinstance(value, dict) else "?"
