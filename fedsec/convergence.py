"""Whether an attack ran to convergence: the fact every "no leak" verdict rests on.

An attack that fails to beat its naive baseline says something about the protocol only if it
was as strong as it could be: an optimiser stopped far from its optimum proves nothing. So
every iterative attack records, per run of its optimiser, its objective history, why it
stopped and whether more budget would likely help (:class:`Convergence`), and puts the
combination of its runs into its Reconstruction's ``info["convergence"]``
(:func:`combine`, :meth:`Convergence.to_info`). Closed-form attacks (a least-squares solve, a
pseudoinverse) converge by construction: they declare ``closed_form = True`` on their class
and the audit records them as such. An attack that reports nothing is "not reported", and no
verdict of protection is drawn from it.

Why an optimiser stopped (:data:`STOPS`, best first):

* ``closed-form``: no iteration (exact solve);
* ``converged``: the objective reached its floor, or stopped improving over the last part of
  the budget (relative improvement over the tail below ``tol`` of the whole improvement), or
  the optimiser's own stationarity test ended the run (a fixed point of its iteration, no
  descent direction from a fresh start): more budget cannot move it;
* ``stalled``: the optimiser stopped itself without certifying a stationary point (a solver
  giving up inaccurate, a line search failing) while the objective was still improving
  before that;
* ``budget``: every step was used and the objective was still improving: more budget would
  likely help;
* ``diverged``: the objective became non-finite.

Starting points: :func:`best_start` keeps the run with the lowest objective among several
starts (the adversary's prior, random draws) by the objective alone, never by the truth, and
records every start's objective.

Examples
--------
>>> judge([10.0, 5.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], budget=10).stopped
'converged'
>>> judge([10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.5], budget=10).stopped
'budget'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np

from fedsec.errors import ValidationError

#: Why an optimiser stopped, best first: a combination reports the worst of its runs.
STOPS = ("closed-form", "converged", "stalled", "budget", "diverged")
#: The stops that count as converged: a failure of such a run is evidence of protection.
CONVERGED = frozenset({"closed-form", "converged"})
#: Points of the objective history kept in a result (evenly spaced, the last included).
HISTORY_POINTS = 24
#: The default share of the run, at its end, over which improvement is judged.
TAIL = 0.2
#: The default relative improvement over the tail below which a run has converged.
TOL = 1e-3

T = TypeVar("T")


@dataclass(frozen=True)
class Convergence:
    """How one optimiser run (or a combination of runs) ended.

    Attributes
    ----------
    stopped : str
        One of :data:`STOPS`.
    steps : int
        Steps (iterations, epochs) run; for a combination, the most any run used.
    budget : int
        Steps allowed (0 for a closed form).
    history : tuple of float
        The objective at evenly spaced steps (at most :data:`HISTORY_POINTS`, the last step
        included); for a combination, that of its worst run.
    tail_improvement : float
        Relative decrease of the objective over the tail of the run (0: flat).
    runs, runs_converged : int
        How many optimiser runs this covers, and how many of them converged.
    starts : Mapping[str, float]
        Each starting point tried (``prior``, ``random:1``, ...) and the objective it ended at.
    best_start : str
        The start whose run was kept (lowest objective).
    """

    stopped: str
    steps: int = 0
    budget: int = 0
    history: tuple[float, ...] = ()
    tail_improvement: float = 0.0
    runs: int = 1
    runs_converged: int = -1
    starts: Mapping[str, float] = field(default_factory=dict)
    best_start: str = ""

    def __post_init__(self) -> None:
        if self.stopped not in STOPS:
            raise ValidationError(f"A convergence record says stopped={self.stopped!r}; use "
                                  f"one of {', '.join(STOPS)}.")
        if self.runs_converged < 0:
            object.__setattr__(self, "runs_converged", self.runs if self.converged else 0)

    @property
    def converged(self) -> bool:
        """Whether every run converged (or was a closed form)."""
        return self.stopped in CONVERGED

    @property
    def more_budget_helps(self) -> bool:
        """Whether more steps would likely lower the objective (a run ran out of budget)."""
        return self.stopped == "budget"

    def to_info(self) -> dict[str, Any]:
        """The JSON-able form an attack puts in ``info["convergence"]``.

        Examples
        --------
        >>> info = Convergence("budget", steps=5, budget=5).to_info()
        >>> info["converged"], info["more_budget_helps"], info["stopped"]
        (False, True, 'budget')
        """
        return {"stopped": self.stopped, "converged": self.converged,
                "more_budget_helps": self.more_budget_helps, "steps": self.steps,
                "budget": self.budget, "history": [_finite(v) for v in self.history],
                "tail_improvement": _finite(self.tail_improvement), "runs": self.runs,
                "runs_converged": self.runs_converged,
                "starts": {k: _finite(v) for k, v in self.starts.items()},
                "best_start": self.best_start}

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> Convergence:
        """Read back what :meth:`to_info` wrote (a plug-in's record, checked)."""
        try:
            return cls(stopped=str(info["stopped"]), steps=int(info.get("steps", 0)),
                       budget=int(info.get("budget", 0)),
                       history=tuple(float("nan") if v is None else float(v)
                                     for v in info.get("history", ())),
                       tail_improvement=float(info.get("tail_improvement") or 0.0),
                       runs=int(info.get("runs", 1)),
                       runs_converged=int(info.get("runs_converged", -1)),
                       starts={str(k): float("nan") if v is None else float(v)
                               for k, v in dict(info.get("starts", {})).items()},
                       best_start=str(info.get("best_start", "")))
        except (KeyError, TypeError, ValueError) as error:
            raise ValidationError(f"An attack's convergence record is malformed ({error}); "
                                  "build it with fedsec.convergence.judge or combine.") from None


CLOSED_FORM = Convergence("closed-form")
"""The record of an attack without iterations (it converges by construction)."""


def judge(history: Sequence[float], *, budget: int, tol: float = TOL, tail: float = TAIL,
          floor: float = 0.0, stopped_early: bool = False,
          stationary: bool = False) -> Convergence:
    """Why a run with objective ``history`` (one value per step, lower is better) stopped.

    Parameters
    ----------
    history : sequence of float
        The objective after each step (the value the optimiser saw).
    budget : int
        Steps allowed.
    tol : float
        Relative improvement over the tail (against the whole run's improvement) below which
        the run has converged.
    tail : float
        The share of the run, at its end, over which improvement is judged. With a step
        schedule that shrinks the learning rate towards the end, choose a tail that covers
        more than the last, smallest steps.
    floor : float
        An objective at or below this has converged whatever the tail (0 for a distance that
        is 0 at an exact match).
    stopped_early : bool
        Whether the optimiser stopped itself before the budget (no decrease found).
    stationary : bool
        Whether that stop is the optimiser's own test of a stationary point (its iterates
        stopped moving; no descent direction from a fresh start): converged, whatever the
        tail.

    Examples
    --------
    >>> judge([4.0, 1.0, 0.0], budget=100).stopped
    'converged'
    >>> judge([1.0, float("nan")], budget=10).stopped
    'diverged'
    >>> judge([10.0, 8.0, 6.0, 4.0], budget=4, stopped_early=True).stopped
    'budget'
    >>> judge([10.0, 8.0, 6.0, 4.0], budget=9, stopped_early=True).stopped
    'stalled'
    >>> judge([10.0, 8.0, 6.0, 4.0], budget=9, stopped_early=True, stationary=True).stopped
    'converged'
    """
    if budget < 0 or not 0 < tail <= 1 or tol < 0:
        raise ValidationError(f"judge needs budget >= 0, 0 < tail <= 1 and tol >= 0; got "
                              f"budget={budget}, tail={tail}, tol={tol}.")
    values = np.asarray(history, dtype=np.float64)
    steps = len(values)
    kept = thin(values)
    if steps == 0:
        return Convergence("budget" if budget else "converged", 0, budget, (), 0.0)
    if not np.isfinite(values[-1]):
        return Convergence("diverged", steps, budget, kept, float("nan"))
    finite = np.where(np.isfinite(values), values, np.inf)
    best = float(finite.min())
    improvement = tail_improvement(finite, tail)
    if best <= floor or improvement <= tol or (stationary and stopped_early):
        return Convergence("converged", steps, budget, kept, improvement)
    stop = "stalled" if stopped_early and steps < budget else "budget"
    return Convergence(stop, steps, budget, kept, improvement)


def tail_improvement(values: np.ndarray, tail: float = TAIL) -> float:
    """How much the best objective fell over the last ``tail`` share of the run, as a share
    of how much it fell over the whole run (0: flat, 1: all the progress came at the end).

    Examples
    --------
    >>> tail_improvement(np.array([10.0, 2.0, 1.0, 1.0, 1.0]), tail=0.4)
    0.0
    >>> round(tail_improvement(np.array([10.0, 8.0, 6.0, 4.0, 2.0]), tail=0.4), 3)
    0.5
    """
    running = np.minimum.accumulate(values)
    n = len(running)
    window = max(1, math.ceil(tail * n))
    before = float(running[0] if n <= window else running[n - window - 1])
    total = float(running[0] - running[-1])
    if not math.isfinite(total) or total <= 0:
        return 0.0
    return max(0.0, (before - float(running[-1])) / total)


def thin(values: Sequence[float] | np.ndarray, points: int = HISTORY_POINTS
         ) -> tuple[float, ...]:
    """At most ``points`` evenly spaced values of a history, the first and last included.

    Examples
    --------
    >>> thin([5.0, 4.0, 3.0, 2.0, 1.0], points=3)
    (5.0, 3.0, 1.0)
    """
    array = np.asarray(values, dtype=np.float64)
    if len(array) <= points:
        return tuple(float(v) for v in array)
    index = np.unique(np.linspace(0, len(array) - 1, points).round().astype(int))
    return tuple(float(v) for v in array[index])


def combine(records: Iterable[Convergence]) -> Convergence:
    """One record for several runs (targets, views, restarts kept): the worst stop, the most
    steps, the worst run's history; :attr:`Convergence.runs_converged` counts the good ones.

    Examples
    --------
    >>> both = combine([Convergence("converged", 3, 10), Convergence("budget", 10, 10)])
    >>> both.stopped, both.runs, both.runs_converged
    ('budget', 2, 1)
    """
    items = list(records)
    if not items:
        return CLOSED_FORM
    worst = max(items, key=lambda r: STOPS.index(r.stopped))
    return replace(worst, steps=max(r.steps for r in items),
                   budget=max(r.budget for r in items),
                   runs=sum(r.runs for r in items),
                   runs_converged=sum(r.runs_converged for r in items),
                   starts=worst.starts if len(items) == 1 else {})


def best_start(starts: Sequence[tuple[str, Callable[[], tuple[T, float, Convergence]]]]
               ) -> tuple[T, Convergence]:
    """Run every start and keep the one whose objective is lowest (never judged by the truth).

    Each start is ``(label, run)``; ``run()`` returns ``(result, final objective, its
    convergence record)``. The kept record lists every start's objective and names the winner.

    Examples
    --------
    >>> runs = [("prior", lambda: ("a", 0.5, Convergence("converged", 4, 9))),
    ...         ("random:1", lambda: ("b", 0.1, Convergence("converged", 6, 9)))]
    >>> result, record = best_start(runs)
    >>> result, record.best_start, record.starts
    ('b', 'random:1', {'prior': 0.5, 'random:1': 0.1})
    """
    if not starts:
        raise ValidationError("best_start needs at least one starting point.")
    outcomes = [(label, *run()) for label, run in starts]
    finite = [o for o in outcomes if math.isfinite(o[2])] or outcomes
    label, result, _, record = min(finite, key=lambda o: o[2])
    objectives = {o[0]: float(o[2]) for o in outcomes}
    return result, replace(record, starts=objectives, best_start=label)


def of_attack(info: Mapping[str, Any], closed_form: bool) -> dict[str, Any]:
    """The convergence an audit records for one attack run: the attack's own record, the
    closed form's, or "not reported" (``converged`` None) for an iterative attack silent
    about it (or "malformed", with the error, for a record that does not parse).

    Examples
    --------
    >>> of_attack({}, closed_form=True)["stopped"], of_attack({}, False)["converged"] is None
    ('closed-form', True)
    >>> of_attack({"convergence": {"stopped": "sideways"}}, False)["stopped"]
    'malformed'
    """
    record = info.get("convergence")
    if isinstance(record, Mapping):
        try:
            return Convergence.from_info(record).to_info()
        except ValidationError as error:  # a plug-in's bad record: kept as unknown
            return {**NOT_REPORTED, "stopped": "malformed", "error": str(error)}
    if closed_form:
        return CLOSED_FORM.to_info()
    return dict(NOT_REPORTED)


#: What an audit records for an iterative attack that says nothing of its convergence.
NOT_REPORTED: Mapping[str, Any] = {"stopped": "not reported", "converged": None,
                                   "more_budget_helps": None}


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
