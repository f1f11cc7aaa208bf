"""Typed values that components hand back: a protocol's Outcome, an attack's Reconstruction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What a protocol run (or its centralized reference) produced.

    Attributes
    ----------
    metrics : Mapping[str, float]
        Quality of the result on the evaluator's test data (accuracy, error, ...).
    values : Mapping[str, numpy.ndarray]
        Results to compare with the centralized reference (a sum, model
        coefficients, test-set scores): same keys, same shapes.
    truth : Mapping[str, numpy.ndarray]
        Extra ground truth for scoring attacks, beyond the parties' private
        holdings (for example a hidden distance block).
    model : object, optional
        The trained model, an estimator with ``predict`` (and ``decision_function`` or
        ``predict_proba`` where the maths gives them) that reads the dataset's full feature
        matrix, columns in order, and returns class codes in the dataset's label encoding
        (:mod:`fedsec.estimators`). The evaluator's output, never a message. None when the
        protocol trains no model (``secure-sum``: its result is a sum).
    """

    metrics: Mapping[str, float] = field(default_factory=dict)
    values: Mapping[str, np.ndarray] = field(default_factory=dict)
    truth: Mapping[str, np.ndarray] = field(default_factory=dict)
    model: Any = None


@dataclass(frozen=True, kw_only=True)
class Reconstruction:
    """What an attack recovered from a View, keyed like the ground truth.

    Attributes
    ----------
    attack : str
        The attack's registered name.
    threat : str
        The threat model it ran as.
    estimates : Mapping[str, numpy.ndarray]
        Ground-truth key (for example ``party/party2/value/vector``) to the
        attack's estimate of it.
    baseline : Mapping[str, numpy.ndarray]
        The naive guess for the same keys, from what the adversary
        legitimately learns without attacking (for example the mean).
    info : Mapping[str, Any]
        JSON-able facts about the attack's run (messages used, opaque
        messages skipped, iterations).
    """

    attack: str
    threat: str
    estimates: Mapping[str, np.ndarray]
    baseline: Mapping[str, np.ndarray]
    info: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self, *, redact: bool = True) -> dict[str, Any]:
        """JSON-able form; reconstructed values are left out unless ``redact=False``."""
        out: dict[str, Any] = {
            "attack": self.attack, "threat": self.threat, "targets": sorted(self.estimates),
            "info": dict(self.info),
        }
        if not redact:
            out["estimates"] = {k: np.asarray(v).tolist() for k, v in self.estimates.items()}
        return out
