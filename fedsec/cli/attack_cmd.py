"""``fedsec attack``: run an attack on one adversary's View of a saved transcript.

The handler imports the transcript reader, views and the attack's module when it runs, so
the parser is built without them (see :mod:`fedsec.cli.main`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fedsec.cli.progress import Display
from fedsec.errors import FedsecError, TranscriptError, ValidationError
from fedsec.params import parse_assignments


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "attack", help="attack what one adversary saw in a transcript",
        description="Build the View of a party, coalition or eavesdropper from a saved "
                    "transcript (plus the coalition's own holdings from the private store beside "
                    "it), run an attack, and score it when --truth is given.")
    p.add_argument("transcript", help="path to a transcript.arrow file")
    p.add_argument("--attack", required=True, help="attack name (see 'fedsec list attacks')")
    p.add_argument("--as", required=True, dest="threat", metavar="PARTY[,PARTY...]",
                   help="the adversary: a party, a coalition 'a,b', or 'eavesdropper:a->b'")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="params",
                   help="an attack parameter (repeatable)")
    p.add_argument("--truth", metavar="DIR", help="run directory whose private store scores "
                                                  "the attack")
    p.add_argument("--scorer", help="scorer name (default: the attack's own)")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from fedsec import registry
    from fedsec.cli.output import print_json
    from fedsec.convergence import of_attack
    from fedsec.private_store import FILE_NAME as PRIVATE_FILE
    from fedsec.private_store import check_same_run, load_private
    from fedsec.transcript import read_transcript
    from fedsec.views import build_view

    path = Path(args.transcript)
    transcript = read_transcript(path)
    report = transcript.verify()
    if report.status == "tampered":
        raise TranscriptError(f"{path} failed its integrity check ({report.summary()}); "
                              "attacking an altered transcript would give meaningless scores.")
    if not report.ok:
        print(f"fedsec: warning: {report.summary()}; attacking the readable part", file=sys.stderr)
    head = str((transcript.footer or {}).get("head", ""))
    beside = path.parent / PRIVATE_FILE
    if beside.is_file() and head:
        check_same_run(beside, head)
    private = load_private(beside) if beside.is_file() else None
    view = build_view(transcript, args.threat, private)
    attack = registry.create("attack", args.attack,
                             parse_assignments(args.params, what="Attack parameter"))
    attack.check(view)
    display = None if args.json else Display()
    if display is not None:
        attack.progress_hook = display.update
    try:
        reconstruction = attack.run(view)
    finally:
        if display is not None:
            display.close()
    outcome: dict[str, Any] = {
        "transcript": str(path), "integrity": report.to_dict(), "attack": attack.describe(),
        "threat": str(view.threat), "knowledge_loaded": private is not None,
        "reconstruction": reconstruction.to_dict(redact=True),
        "convergence": of_attack(reconstruction.info, type(attack).closed_form),
    }
    if args.truth is not None:
        truth_path = Path(args.truth) / PRIVATE_FILE
        if not truth_path.is_file():
            raise ValidationError(f"--truth {args.truth}: no {PRIVATE_FILE} there; pass the "
                                  "directory 'fedsec run --out' wrote.")
        if head:
            check_same_run(truth_path, head)
        scorer = registry.create("scorer", args.scorer or attack.default_scorer)
        try:
            outcome["scores"] = scorer.score(reconstruction, load_private(truth_path))
        except FedsecError:
            raise
        except (ValueError, TypeError, IndexError, ArithmeticError) as error:
            raise ValidationError(
                f"Scorer {scorer.name!r} cannot score what {attack.name!r} recovers "
                f"({type(error).__name__}: {error}); use its default scorer, "
                f"--scorer {attack.default_scorer}."
            ) from error
    if args.json:
        print_json(outcome)
        return 0
    info = ", ".join(f"{k}={v}" for k, v in reconstruction.info.items() if k != "convergence")
    print(f"{attack.name} as {view.threat}: {len(view.messages)} messages observed; {info}")
    print("  " + convergence_line(outcome["convergence"]))
    scores = outcome.get("scores")
    if scores is None:
        print("  not scored (pass --truth DIR to score against the run's private store)")
        return 0
    print("  " + format_scores(scores))
    return 0


def convergence_line(record: dict[str, Any]) -> str:
    """How the attack ended, in one line (a failure is evidence only when it converged).

    Examples
    --------
    >>> convergence_line({"stopped": "budget", "converged": False, "steps": 300,
    ...                   "budget": 300, "more_budget_helps": True})
    'did not converge (budget: 300 of 300 steps); more budget would likely help'
    >>> convergence_line({"stopped": "closed-form", "converged": True})
    'converged (closed form)'
    """
    stopped = str(record.get("stopped"))
    if stopped == "closed-form":
        return "converged (closed form)"
    steps = (f": {record.get('steps')} of {record.get('budget')} steps"
             if record.get("budget") else "")
    if record.get("converged") is True:
        return f"converged ({stopped}{steps})"
    if record.get("converged") is None:
        return (f"convergence {stopped}: a result at the baseline is inconclusive")
    helps = "; more budget would likely help" if record.get("more_budget_helps") else ""
    return f"did not converge ({stopped}{steps}){helps}"


def format_scores(scores: dict[str, Any]) -> str:
    """One line: each metric next to its baseline (``name value (baseline b)``)."""
    parts = []
    for name, value in scores.items():
        if name.startswith("baseline_") or name == "per_target" or not isinstance(value, float):
            continue
        base = scores.get(f"baseline_{name}")
        text = f"{name.replace('_', ' ')} {value:.4g}"
        if isinstance(base, float):
            text += f" (baseline {base:.4g})"
        parts.append(text)
    return "; ".join(parts) + f" over {scores.get('n_targets', 0)} targets"
