"""``fedsec run``: run one protocol and write its transcript and result.

The handler imports the runner (numpy, pyarrow, the protocol's module) when it runs, so the
parser is built without them (see :mod:`fedsec.cli.main`).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from fedsec.cli.progress import Display
from fedsec.errors import ValidationError
from fedsec.params import parse_assignments
from fedsec.transport import TRANSPORTS
from fedsec.validation import read_toml


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="run a protocol among simulated parties",
                       description="Run a protocol; write DIR/transcript.arrow, DIR/result.json "
                                   "and DIR/private.npz (the parties' holdings, for scoring).")
    p.add_argument("protocol", help="protocol name (see 'fedsec list protocols')")
    p.add_argument("--dataset", help="dataset name, NAME:key=value,... (e.g. iris:positive=setosa "
                   "for one class against the rest) or a CSV file (default: the protocol's)")
    p.add_argument("--partition", help="partition spec, e.g. horizontal:parties=5, or a TOML "
                                       "file holding the table (top level or [partition])")
    p.add_argument("--backend", default="plain", help="masking backend (default: plain)")
    p.add_argument("--backend-set", action="append", default=[], metavar="KEY=VALUE",
                   help="a backend parameter (repeatable)")
    p.add_argument("--defense", action="append", default=[], metavar="NAME[:KEY=VALUE,...]",
                   help="a defence with its parameters (repeatable)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="params",
                   help="a protocol parameter (repeatable)")
    p.add_argument("--seed", type=int, default=0,
                   help="the run's public seed: which rows are test rows and which party holds "
                        "which (default: 0)")
    p.add_argument("--secret-seed", type=int, default=None, metavar="N",
                   help="the root of every secret a party keeps (noise, shared seeds, initial "
                        "weights, simulation-mode keys); default: a fresh random one, kept "
                        "only in the private store ('fedsec inspect --seeds' prints it), so "
                        "no transcript lets anyone regenerate a party's secrets; give it to "
                        "reproduce a run exactly")
    p.add_argument("--test-size", type=_test_size, default=None,
                   help="test fraction, or a number of test rows (default: the protocol's, "
                        "usually 0.25)")
    p.add_argument("--split-file", metavar="FILE",
                   help="the test rows (and optionally the training rows) from a file, a "
                        "paper's own split: JSON {\"test\": [...], \"train\": [...]} or "
                        "row numbers (from 0) in text; instead of --test-size")
    p.add_argument("--split-seed", type=int, default=None, metavar="N",
                   help="split by this seed instead of --seed, so runs of several seeds share "
                        "one split (a paper's 'one split, ten starting points')")
    p.add_argument("--scaling", default=None, choices=("minmax", "standard", "none"),
                   help="feature scaling fitted on the training set (default: the "
                        "protocol's, minmax for tabular protocols, none for sequences)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--transport", choices=TRANSPORTS, default="inproc",
                   help="how messages travel: inproc, a function call in this process "
                        "(default), or tcp, each party a process of its own on 127.0.0.1 "
                        "with every message crossing a socket between the two parties' "
                        "processes (writes DIR/parties/NAME.log)")
    p.add_argument("--transport-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="with --transport tcp: how long to wait for a party's process before "
                        "the run fails, naming it (default: 60)")
    p.add_argument("--sign-key", metavar="KEY.pem",
                   help="sign the transcript's end record with this Ed25519 private key (PEM), "
                        "for transcripts that leave this machine")
    p.set_defaults(handler=handle)


def _test_size(text: str) -> float | int:
    """``0.2`` is a fraction, ``100`` a number of rows."""
    return int(text) if text.isdigit() else float(text)


def parse_defense(text: str) -> tuple[str, dict[str, str]]:
    """``name:key=value,key=value`` -> (name, {key: value})."""
    name, _, rest = text.partition(":")
    items = [item for item in rest.split(",") if item.strip()] if rest else []
    return name.strip(), parse_assignments(items, what=f"Defence option in {text!r}")


def partition_argument(text: str | None) -> str | dict[str, Any] | None:
    """A spec string as given, or the table of a ``.toml`` file."""
    if text is None or not text.endswith(".toml"):
        return text
    table = read_toml(Path(text), what=f"--partition {text}",
                      missing=f"--partition {text}: no such TOML file.")
    return dict(table.get("partition", table))


def handle(args: argparse.Namespace) -> int:
    from fedsec.cli.output import print_json
    from fedsec.cost import human_bytes
    from fedsec.runner import RunConfig, run
    from fedsec.transcript.signing import load_signing_key

    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise ValidationError(f"--out {args.out} is a file; name a folder for the transcript, "
                              "result and private store (it is created if missing).")
    config = RunConfig(
        protocol=args.protocol, dataset=args.dataset,
        partition=partition_argument(args.partition),
        backend=args.backend,
        backend_params=parse_assignments(args.backend_set, what="Backend parameter"),
        defenses=[parse_defense(d) for d in args.defense],
        params=parse_assignments(args.params, what="Protocol parameter"),
        seed=args.seed, secret_seed=args.secret_seed, test_size=args.test_size,
        scaling=args.scaling, split_file=args.split_file, split_seed=args.split_seed,
    )
    key = None if args.sign_key is None else load_signing_key(args.sign_key)
    transport = None
    if args.transport == "tcp":
        from fedsec.transport.tcp import TcpTransport

        transport = TcpTransport(timeout=args.transport_timeout)
    display = None if args.json else Display()  # progress on stderr; --json prints only JSON
    try:
        result = run(config, args.out, progress=None if display is None else display.message,
                     on_progress=None if display is None else display.update, sign_key=key,
                     transport=transport)
    finally:
        if display is not None:
            display.close()
    record = result.record
    if args.json:
        print_json(record.to_json())
        return 0
    cost = record.total_cost
    comparison = record.comparison
    print(f"{record.protocol['name']} on {record.dataset.name} "
          f"({record.partition['spec']}), backend {record.backend['name']}, "
          f"seed {record.seed}, secret seed {record.secret_seed_source}")
    print(f"  messages: {cost['messages']}, bytes on the wire: {human_bytes(cost['bytes'])}, "
          f"wall time: {cost['wall_seconds']:.3f} s")
    if record.transport is not None:
        t = record.transport
        print(f"  transport tcp: {t['party_processes']} party processes, "
              f"{t['messages_on_sockets']} messages over {t['connections']} connections, "
              f"{human_bytes(t['socket_bytes'])} on the sockets; sender's and receiver's "
              f"digests matched for all {t['digests_matched']} messages, party logs agree")
    for side, values in (("federated", record.federated_metrics),
                         ("centralized", record.centralized_metrics)):
        metrics = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in values.items())
        print(f"  {side} metrics: {metrics or '-'}")
    gaps = ", ".join(f"{k} {v:+.4g}" for k, v in record.metric_gaps.items())
    if not comparison.claimed:  # result.json: "agrees": null, "claimed": false
        what = ("the federated model is not the centralized one" if math.isinf(comparison.rtol)
                else "nothing was compared with a centralized reference")
        print(f"  {what} (no agreement claimed); federated minus centralized: {gaps or '-'}")
    else:
        verdict = "matches" if comparison.agrees else "DIFFERS FROM"
        own = {k: v.rtol for k, v in comparison.values.items() if v.rtol is not None}
        tolerance = (f"tolerance {comparison.rtol:g}" if not own else
                     f"tolerance {comparison.rtol:g}, and per value "
                     + ", ".join(f"{k} {t:g}" for k, t in own.items()))
        print(f"  federated result {verdict} the centralized reference "
              f"(max relative difference {comparison.worst:.3g}; {tolerance})"
              + (f"; federated minus centralized: {gaps}" if gaps else ""))
    if record.backend.get("insecure_simulation_keys"):
        print("  keys: derived from the run's secret seed (simulation mode, reproducible, "
              "insecure by design; use key_source=agreement or secrets for deployment-grade keys)")
    if record.backend.get("insecure_key_size"):
        print(f"  keys: {record.backend.get('params', {}).get('key_bits')}-bit, allowed for tests "
              "only (insecure_test_keys=true): insecure whatever their source")
    for warning in record.warnings:
        print(f"  WARNING: {warning}")
    logs = ", parties/" if record.transport is not None else ""
    print(f"  wrote {args.out}/transcript.arrow, result.json, private.npz{logs}")
    return 0
