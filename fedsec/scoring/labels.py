"""Inferred label distributions against a client's true labels (label inference attacks).

An estimate is a client's label multiset, keyed like its true labels; the order is not scored.
The error is the total variation distance between the two label distributions (the share of
labels attributed to the wrong class). The baseline guesses the distribution of every other
party's labels under the same key: what the adversary knows of the population without the
attack.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.scoring.reconstruction import other_parties, scored_targets, target_summary


def distribution(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """The share of each class among ``labels`` (integers in ``[0, n_classes)``).

    Examples
    --------
    >>> distribution(np.array([0, 1, 1, 1]), 3).tolist()
    [0.25, 0.75, 0.0]
    """
    labels = np.asarray(labels)
    if labels.size == 0:
        raise ValidationError("An empty label set cannot be scored.")
    if not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0:
        raise ValidationError("Labels must be non-negative integers (class indices).")
    return np.bincount(labels, minlength=n_classes)[:n_classes] / labels.size


def total_variation(p: np.ndarray, q: np.ndarray) -> float:
    """Half the L1 distance of two distributions: 0 equal, 1 disjoint.

    Examples
    --------
    >>> total_variation(np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    0.5
    """
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


@register("scorer", "label-counts")
class LabelCounts(Scorer):
    """Inferred label counts against the client's true ones (total variation), next to guessing the
    other parties' label distribution.

    A client's inferred label distribution vs its true one, and vs the others' as a guess.
    """

    paper = ("Geng et al., Towards general deep leakage in federated learning, 2021; "
             "Zhao et al., iDLG, 2020")
    recovers = "the label counts of {what}"
    reads = frozenset({"labels"})
    glossary: ClassVar[Mapping[str, str]] = {
        "label_error": "the total variation distance between the inferred and the true label "
                       "distributions: the share of labels put in the wrong class.",
        "exact_rate": "the fraction of clients whose label counts are recovered exactly.",
        "advantage": "1 - label error / the baseline's (1: exact, 0: the other parties' "
                     "distribution guesses as well).",
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        per_target: dict[str, dict[str, float]] = {}
        for key in scored_targets(reconstruction, truth):
            others = other_parties(key, truth)
            true = np.asarray(truth[key]).astype(np.int64)
            estimate = np.asarray(reconstruction.estimates[key]).astype(np.int64)
            pool = [np.asarray(truth[k]).astype(np.int64) for k in others]
            n_classes = int(max([true.max(), estimate.max(initial=0),
                                 *[p.max(initial=0) for p in pool]])) + 1
            p_true = distribution(true, n_classes)
            p_est = distribution(estimate, n_classes)
            entry = {"label_error": total_variation(p_est, p_true),
                     "exact_rate": float(estimate.size == true.size
                                         and np.array_equal(np.sort(estimate), np.sort(true)))}
            if pool:
                guess = distribution(np.concatenate(pool), n_classes)
                entry["baseline_label_error"] = total_variation(guess, p_true)
                entry["baseline_exact_rate"] = float(
                    np.array_equal(np.round(guess * true.size), np.bincount(
                        true, minlength=n_classes)[:n_classes]))
            else:
                entry["baseline_label_error"] = float("nan")
                entry["baseline_exact_rate"] = float("nan")
            per_target[key] = entry
        return target_summary(per_target, ("label_error", "exact_rate"),
                              advantage_of="label_error")
