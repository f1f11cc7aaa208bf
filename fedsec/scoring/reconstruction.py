"""Built-in scorers: leakage metrics, each next to its naive baseline."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import numpy as np

from fedsec.declare import Declared, Float
from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.private_store import parse_truth_key
from fedsec.registry import register


def relative_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """``||estimate - truth|| / ||truth||`` (Frobenius); absolute error when truth is zero.

    Examples
    --------
    >>> relative_error(np.array([1.0, 1.0]), np.array([1.0, 0.0]))
    1.0
    """
    estimate = np.asarray(estimate, dtype=float)
    truth = np.asarray(truth, dtype=float)
    if estimate.shape != truth.shape:
        raise ValidationError(
            f"An estimate of shape {estimate.shape} cannot be scored against truth of shape "
            f"{truth.shape}."
        )
    norm = float(np.linalg.norm(truth))
    diff = float(np.linalg.norm(estimate - truth))
    return diff / norm if norm > 0 else diff


def check_truth(keys: Iterable[str], truth: Mapping[str, Any]) -> None:
    """Refuse to score estimates the ground truth has no entry for (naming every one).

    Examples
    --------
    >>> check_truth(["party/a/X"], {"party/a/X": 0})
    >>> check_truth(["party/b/X"], {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedsec.errors.ValidationError: The ground truth has no entry for party/b/X; score ...
    """
    missing = [key for key in keys if key not in truth]
    if missing:
        raise ValidationError(
            f"The ground truth has no entry for {', '.join(missing)}; score with the private "
            "store of the run that produced the transcript."
        )


def scored_targets(reconstruction: Reconstruction, truth: Mapping[str, Any]) -> list[str]:
    """Every estimated target, sorted, each checked against the ground truth.

    Examples
    --------
    >>> from fedsec.outcomes import Reconstruction
    >>> rec = Reconstruction(attack="demo", threat="server",
    ...                      estimates={"b/x": np.ones(1), "a/x": np.ones(1)}, baseline={})
    >>> scored_targets(rec, {"a/x": 0, "b/x": 0})
    ['a/x', 'b/x']
    """
    keys = sorted(reconstruction.estimates)
    check_truth(keys, truth)
    return keys


def other_parties(key: str, truth: Mapping[str, Any]) -> list[str]:
    """The keys of ``truth`` holding ``key``'s path for the other parties (what a baseline
    guessing from the population draws on).

    Examples
    --------
    >>> other_parties("party/a/y", {"party/a/y": 0, "party/b/y": 0, "party/b/X": 0})
    ['party/b/y']
    """
    path = parse_truth_key(key).path
    return [k for k in truth if k != key and parse_truth_key(k).path == path]


@dataclass(frozen=True, kw_only=True)
class EpsilonParams(Declared):
    """The parameter of a scorer counting what is recovered within ``epsilon`` (relative
    error, or distance after matching), shared by the built-in scorers."""

    epsilon: Annotated[float, Float(min=0.0)] = 0.05
    """A target counts as recovered when its error is at most epsilon (relative error, or distance
    after matching or alignment, as the scorer says; column-space: 1 - captured)."""


def per_target(reconstruction: Reconstruction, truth: Mapping[str, Any],
               metrics: Callable[[np.ndarray, np.ndarray], dict[str, float]],
               keys: Iterable[str] | None = None) -> dict[str, dict[str, float]]:
    """``metrics(estimate, truth)`` for each target, and for its baseline (``baseline_`` names).

    ``keys`` defaults to every estimated target; each is checked against the truth.

    Examples
    --------
    >>> from fedsec.outcomes import Reconstruction
    >>> rec = Reconstruction(attack="demo", threat="server", estimates={"a/x": np.ones(2)},
    ...                      baseline={"a/x": np.zeros(2)})
    >>> per_target(rec, {"a/x": np.ones(2)}, lambda e, t: {"error": relative_error(e, t)})
    {'a/x': {'error': 0.0, 'baseline_error': 1.0}}
    """
    keys = list(reconstruction.estimates if keys is None else keys)
    check_truth(keys, truth)
    out: dict[str, dict[str, float]] = {}
    for key in keys:
        target = np.asarray(truth[key], dtype=np.float64)
        entry = metrics(np.asarray(reconstruction.estimates[key], dtype=np.float64), target)
        if key in reconstruction.baseline:
            base = metrics(np.asarray(reconstruction.baseline[key], dtype=np.float64), target)
            entry.update({f"baseline_{k}": v for k, v in base.items()})
        out[key] = entry
    return out


def mean_over_targets(per_target: Mapping[str, Mapping[str, float]],
                      names: Iterable[str]) -> dict[str, float]:
    """Each metric and its ``baseline_`` twin averaged over the targets that have it (NaN: none).

    Examples
    --------
    >>> mean_over_targets({"a": {"e": 1.0, "baseline_e": 2.0}, "b": {"e": 3.0}}, ["e"])
    {'e': 2.0, 'baseline_e': 2.0}
    """
    out = {}
    for name in names:
        for key in (name, f"baseline_{name}"):
            values = [entry[key] for entry in per_target.values() if key in entry]
            out[key] = float(np.mean(values)) if values else float("nan")
    return out


def target_summary(per_target: Mapping[str, Mapping[str, float]], names: Iterable[str], *,
                   advantage_of: str, **facts: Any) -> dict[str, Any]:
    """What a scorer returns from its per-target metrics: the number of targets, ``facts``,
    each of ``names`` averaged with its baseline (:func:`mean_over_targets`), the
    :func:`advantage` on ``advantage_of``, and ``per_target`` itself.

    Examples
    --------
    >>> summary = target_summary({"a": {"e": 0.5, "baseline_e": 1.0}}, ["e"], advantage_of="e",
    ...                          epsilon=0.1)
    >>> list(summary), summary["advantage"]
    (['n_targets', 'epsilon', 'e', 'baseline_e', 'advantage', 'per_target'], 0.5)
    """
    summary: dict[str, Any] = {"n_targets": len(per_target), **facts}
    summary.update(mean_over_targets(per_target, names))
    summary["advantage"] = advantage(summary[advantage_of], summary[f"baseline_{advantage_of}"])
    summary["per_target"] = per_target
    return summary


def advantage_meaning(error: str) -> str:
    """The glossary entry of an ``advantage`` that :func:`advantage` computes on ``error``.

    Examples
    --------
    >>> advantage_meaning("point error")
    "1 - point error / the baseline's (1: exact, 0: the baseline)."
    """
    return f"1 - {error} / the baseline's (1: exact, 0: the baseline)."


def advantage(error: float, baseline_error: float) -> float:
    """``1 - error / baseline_error``: 1 is exact recovery, 0 no better than the naive guess.

    Negative when the attack does worse than the baseline; NaN when the
    baseline is exact (nothing left to gain).

    Examples
    --------
    >>> advantage(0.0, 0.2), advantage(0.2, 0.2)
    (1.0, 0.0)
    """
    if not baseline_error > 0:
        return float("nan")
    return 1.0 - error / baseline_error


@register("scorer", "reconstruction-error")
class ReconstructionError(Scorer):
    """Relative error per target, fraction recovered within epsilon, against the baseline.

    Relative error of each recovered value and the fraction recovered within epsilon.

    Every metric comes with its baseline counterpart (the attack's naive
    guess), and ``advantage`` summarises how much of the gap between the
    baseline and exact recovery the attack closed.
    """

    Params = EpsilonParams
    reads = frozenset({"values", "rows"})
    glossary: ClassVar[Mapping[str, str]] = {
        "relative_error": "||estimate - truth|| / ||truth||, averaged over the targets.",
        "fraction_recovered": "the fraction of targets recovered within relative error epsilon.",
        "advantage": "1 - error / baseline error: 1 is exact recovery, 0 nothing beyond the "
                     "baseline (the naive guess from what the adversary legitimately learns), "
                     "negative worse than it.",
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        eps = self.params.epsilon
        targets = per_target(reconstruction, truth,
                             lambda e, t: {"relative_error": relative_error(e, t)},
                             sorted(reconstruction.estimates))
        errors = np.array([e["relative_error"] for e in targets.values()])
        base = np.array([e["baseline_relative_error"] for e in targets.values()
                         if "baseline_relative_error" in e])
        error = float(errors.mean()) if errors.size else float("nan")
        baseline_error = float(base.mean()) if base.size else float("nan")
        return {
            "n_targets": len(targets),
            "epsilon": eps,
            "relative_error": error,
            "fraction_recovered": float((errors <= eps).mean()) if errors.size else 0.0,
            "baseline_relative_error": baseline_error,
            "advantage": advantage(error, baseline_error),
            "baseline_fraction_recovered": float((base <= eps).mean()) if base.size else 0.0,
            "per_target": targets,
        }
