"""Conformance of scorers: known answers score as such, uninformed guesses as no leak.

Part of :mod:`fedsec.testing` (import the checks from there). The synthetic truths are in
:mod:`fedsec.testing.cases`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from fedsec.interfaces import ESTIMATE_KINDS, Scorer
from fedsec.testing.cases import CASES, Arrays, Case
from fedsec.testing.runs import check_rejects_unknown_parameter

#: How close to exact a perfect estimate's figures must be (an advantage of 1, errors of 0).
EXACT_TOLERANCE = 1e-6


def check_scorer(cls: type[Scorer]) -> None:
    """Bad parameters raise; for each kind of estimate it declares it reads (every kind when
    it declares none), on a synthetic truth (:mod:`fedsec.testing.cases`), with the prior's
    mean as the attack's baseline:

    * a perfect estimate scores as exact recovery: an ``advantage`` of 1 and every error
      (``*_error``, ``mse``) 0, of which it reports at least one;
    * every uninformed estimate (the prior's mean, a random guess of the prior's spread)
      scores as no leak: an ``advantage`` below the level at which a report calls it a
      partial recovery, and not every error 0;
    * ``n_targets``, when reported, counts the targets.
    """
    from fedsec.report.wording import THRESHOLDS

    check_rejects_unknown_parameter(cls)
    unknown = sorted(cls.reads - set(ESTIMATE_KINDS))
    assert not unknown, (
        f"{cls.__name__} declares it reads {unknown}, which are no kinds of estimate; the "
        f"kinds are {sorted(ESTIMATE_KINDS)}")
    partial = dict(THRESHOLDS)["partial"]
    scorer = cls()
    for kind in sorted(cls.reads or ESTIMATE_KINDS):
        case = CASES[kind]()
        perfect = _scored(scorer, case, case.perfect, "a perfect estimate")
        advantage, errors = _figures(perfect)
        assert advantage is not None or errors, (
            f"{cls.__name__} reports neither an advantage nor an error (*_error, mse) for "
            f"{kind}: nothing says how close an estimate came")
        assert advantage is None or advantage >= 1 - EXACT_TOLERANCE, (
            f"{cls.__name__}: a perfect estimate of {kind} has advantage {advantage!r}, not 1")
        wrong = {name: value for name, value in errors.items()
                 if not abs(value) <= EXACT_TOLERANCE}
        assert not wrong, f"{cls.__name__}: a perfect estimate of {kind} has errors {wrong}"
        for label, estimates in case.uninformed.items():
            guessed = _scored(scorer, case, estimates, label)
            advantage, errors = _figures(guessed)
            assert advantage is None or advantage < partial, (
                f"{cls.__name__}: {label} of {kind} scores advantage {advantage:.3g}: an "
                f"uninformed estimate must score at or below the baseline (under {partial}), "
                "not as a leak")
            assert advantage is not None or any(
                abs(v) > EXACT_TOLERANCE for v in errors.values()), (
                f"{cls.__name__}: {label} of {kind} scores every error 0, as exact recovery")


def _scored(scorer: Scorer, case: Case, estimates: Arrays, label: str) -> Mapping[str, Any]:
    """``scorer``'s summary of ``estimates`` on ``case``, with ``n_targets`` checked."""
    name = type(scorer).__name__
    try:
        summary = scorer.score(case.reconstruction(estimates), case.truth)
    except Exception as error:
        raise AssertionError(
            f"{name} failed to score {label} of {case.kind} "
            f"({ESTIMATE_KINDS[case.kind]}): {type(error).__name__}: {error}") from error
    assert isinstance(summary, Mapping), f"{name}.score returned no mapping"
    counted = summary.get("n_targets", case.n_targets)
    assert counted == case.n_targets, (
        f"{name}: {label} of {case.kind} has {case.n_targets} target(s), but n_targets is "
        f"{counted!r}")
    return summary


def _figures(summary: Mapping[str, Any]) -> tuple[float | None, dict[str, float]]:
    """The advantage (None: not reported) and the errors of a scorer's summary."""
    advantage = summary.get("advantage")
    errors = {name: float(value) for name, value in summary.items()
              if (name.endswith("_error") or name == "mse") and _is_number(value)
              and not name.startswith("baseline_")}
    return (None if advantage is None else float(advantage)), errors


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) \
        and not math.isnan(float(value))
