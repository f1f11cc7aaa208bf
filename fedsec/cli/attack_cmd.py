"""``fedsec attack``: run an attack on one adversary's View of a saved transcript.

The handler imports the transcript reader, views and the attack's module when it runs, so
the parser is built without them (see :mod:`fedsec.cli.main`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from fedsec.cli.output import table
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
    p.add_argument("--json", action="store_true",
                   help="print the whole outcome as JSON: every score, per target, and the "
                        "attack's facts (the default is a short summary)")
    p.add_argument("--verify-key", metavar="PUBLIC.pem",
                   help="attack only a transcript signed by this Ed25519 key (PEM): an "
                        "unsigned, wrongly signed or edited one is refused")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from fedsec import registry
    from fedsec.cli.output import print_json
    from fedsec.convergence import of_attack
    from fedsec.private_store import FILE_NAME as PRIVATE_FILE
    from fedsec.private_store import check_same_run, load_private
    from fedsec.views import build_view

    path = Path(args.transcript)
    transcript, report = _read_checked(path, args.verify_key)
    head = str((transcript.footer or {}).get("head", ""))
    beside = path.parent / PRIVATE_FILE
    if beside.is_file() and head:
        check_same_run(beside, head)
    private = load_private(beside) if beside.is_file() else None
    view = build_view(transcript, args.threat, private, run_seed=_run_seed(path, head))
    attack = registry.create("attack", args.attack,
                             parse_assignments(args.params, what="Attack parameter"))
    attack.check(view)
    scorer, truth_path = None, None
    if args.truth is not None:  # everything about scoring is checked before the attack runs
        truth_path = Path(args.truth) / PRIVATE_FILE
        if not truth_path.is_file():
            raise ValidationError(f"--truth {args.truth}: no {PRIVATE_FILE} there; pass the "
                                  "directory 'fedsec run --out' wrote.")
        if head:
            check_same_run(truth_path, head)
        scorer = registry.create("scorer", args.scorer or attack.default_scorer)
        _check_scorer(attack, scorer)
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
        "run_seed": view.run_seed,
        "messages_observed": len(view.messages),
        "reconstruction": reconstruction.to_dict(redact=True),
        "convergence": of_attack(reconstruction.info, type(attack).closed_form),
    }
    if scorer is not None and truth_path is not None:
        outcome["scorer"] = scorer.name
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
    import numpy as np

    shapes = {key: "x".join(map(str, np.shape(value)))
              for key, value in reconstruction.estimates.items()}
    glossary = tuple(getattr(type(scorer), "glossary", {}))
    print("\n".join(summary_lines(outcome, shapes, glossary)))
    return 0


def _read_checked(path: Path, verify_key: str | None) -> tuple[Any, Any]:
    """The transcript at ``path`` and its integrity report: refused when tampered, or, with a
    ``verify_key`` file, unless it is intact (or aborted) and signed by that key."""
    from fedsec.transcript import check_file, read_transcript

    if verify_key is None:
        transcript = read_transcript(path)
        report = transcript.verify()
    else:
        from fedsec.transcript.signing import load_verify_key

        verdict = check_file(path, verify_key=load_verify_key(verify_key))
        if verdict.report is None or verdict.transcript is None:
            raise TranscriptError(f"{path}: {verdict.summary()}.")
        transcript, report = verdict.transcript, verdict.report
        if report.status not in ("complete", "aborted"):
            raise TranscriptError(f"{path} is not a complete transcript signed by "
                                  f"{verify_key} ({report.summary()}); with --verify-key only "
                                  "a signed transcript is attacked.")
    if report.status == "tampered":
        raise TranscriptError(f"{path} failed its integrity check ({report.summary()}); "
                              "attacking an altered transcript would give meaningless scores.")
    if not report.ok:
        print(f"fedsec: warning: {report.summary()}; attacking the readable part", file=sys.stderr)
    return transcript, report


def _run_seed(path: Path, head: str) -> int | None:
    """The run's public seed, as ``result.json`` beside the transcript records it; None when
    there is none, or when it records another run (another chain head than ``head``)."""
    from fedsec.results import RESULT_FILE

    result = path.parent / RESULT_FILE
    if not result.is_file():
        return None
    try:
        recorded = json.loads(result.read_text(encoding="utf-8"))
        seed, recorded_head = recorded["seed"], recorded["transcript"]["head"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    if head and recorded_head != head:
        return None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def _check_scorer(attack: Any, scorer: Any) -> None:
    """Refuse a scorer that cannot read what the attack recovers, before the attack runs."""
    from fedsec.audit.checks import scorer_misfit

    why = scorer_misfit(type(attack), type(scorer), option="--scorer ")
    if why is not None:
        raise ValidationError(why[0].upper() + why[1:] + ".")


#: the score columns the summary shows at most (every metric is in --json)
MAX_METRICS = 3
#: the targets the summary lists at most
MAX_TARGETS = 12


def summary_lines(outcome: dict[str, Any], shapes: dict[str, str] | None = None,
                  glossary: tuple[str, ...] = ()) -> list[str]:
    """What ``fedsec attack`` prints: who attacked what, one row per target (its main scores
    next to the baseline's, in the scorer's ``glossary`` order, and the advantage), how the
    attack ended, its scalar facts; the details are under ``--json``.

    Examples
    --------
    >>> outcome = {"attack": {"name": "demo"}, "threat": "server", "messages_observed": 3,
    ...            "reconstruction": {"targets": ["a/X"], "info": {"rank": 2}},
    ...            "convergence": {"stopped": "closed-form", "converged": True},
    ...            "scorer": "s", "scores": {"n_targets": 1, "error": 0.0,
    ...            "baseline_error": 0.5, "advantage": 1.0,
    ...            "per_target": {"a/X": {"error": 0.0, "baseline_error": 0.5}}}}
    >>> print("\\n".join(summary_lines(outcome)))
    demo as server: 3 messages observed, 1 target, scored by s
    target         error  advantage
    -----------  -------  ---------
    a/X          0 (0.5)
    all targets  0 (0.5)          1
    (in brackets: the naive baseline's value)
    convergence: converged (closed form)
    facts: rank=2
    details: --json
    """
    name = outcome["attack"]["name"]
    targets = sorted(outcome["reconstruction"]["targets"], key=_natural)
    scores = outcome.get("scores")
    head = (f"{name} as {outcome['threat']}: {outcome['messages_observed']} messages observed, "
            f"{len(targets)} target{'s' if len(targets) != 1 else ''}")
    if scores is None:
        lines = [f"{head}, not scored (pass --truth DIR to score against the run's private "
                 "store)"]
        rows = [[key, (shapes or {}).get(key, "")] for key in targets[:MAX_TARGETS]]
        lines += [table(rows, ["target", "estimate"]), *_more(len(targets), "targets")]
    else:
        lines = [f"{head}, scored by {outcome.get('scorer', 'its scorer')}",
                 *_scores_table(scores, targets, glossary)]
    lines.append("convergence: " + convergence_line(outcome["convergence"]))
    facts = _facts(outcome["reconstruction"]["info"])
    if facts:
        lines.append(f"facts: {facts}")
    lines.append("details: --json")
    return lines


def _scores_table(scores: dict[str, Any], targets: list[str],
                  glossary: tuple[str, ...]) -> list[str]:
    """One row per scored target and one for all of them: the main metrics (the baseline's
    value in brackets) and the advantage."""
    numeric = [k for k, v in scores.items() if _is_metric(k, v)]
    order = [k for k in glossary if k in numeric] + [k for k in numeric if k not in glossary]
    metrics = [k for k in order if k != "advantage"][:MAX_METRICS]
    per_target = scores.get("per_target")
    per_target = per_target if isinstance(per_target, dict) else {}
    scored = [key for key in targets if key in per_target] or targets
    rows = [[key, *(_with_baseline(per_target.get(key, {}), m) for m in metrics),
             _number(per_target.get(key, {}).get("advantage"))]
            for key in scored[:MAX_TARGETS]]
    rows.append(["all targets", *(_with_baseline(scores, m) for m in metrics),
                 _number(scores.get("advantage"))])
    lines = [table(rows, ["target", *(m.replace("_", " ") for m in metrics), "advantage"]),
             *_more(len(scored), "scored targets")]
    if len(scored) < len(targets):
        lines.append(f"({len(targets) - len(scored)} other estimates are not scored on their "
                     "own; --json lists them)")
    if any(f"baseline_{m}" in scores for m in metrics):
        lines.append("(in brackets: the naive baseline's value)")
    return lines


def _more(n: int, what: str) -> list[str]:
    return [f"... and {n - MAX_TARGETS} more {what} (--json)"] if n > MAX_TARGETS else []


def _natural(key: str) -> list[Any]:
    """Sort key reading digit runs as numbers: party2 before party10."""
    return [(0, int(part)) if part.isdigit() else (1, part)
            for part in re.split(r"(\d+)", key)]


def _is_metric(name: str, value: Any) -> bool:
    """A score worth a column: a number or a verdict (epsilon-DR's ``passed``)."""
    return (not name.startswith("baseline_") and name not in ("n_targets", "epsilon")
            and isinstance(value, (bool, int, float)))


def _with_baseline(entry: dict[str, Any], metric: str) -> str:
    value, base = entry.get(metric), entry.get(f"baseline_{metric}")
    if value is None:
        return ""
    return _number(value) + (f" ({_number(base)})" if base is not None else "")


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def _facts(info: dict[str, Any], limit: int = 160) -> str:
    """The attack's scalar facts (counts, flags, short words) in one line of at most ``limit``
    characters; lists and tables stay in --json."""
    parts = [f"{k}={v}" for k, v in info.items() if k != "convergence"
             and (isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) <= 40))]
    text = ", ".join(parts)
    return text if len(text) <= limit else text[:limit - 4].rsplit(", ", 1)[0] + ", ..."


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
