"""Scoring a read-out of a worker's decision function against the one its coefficients make.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for Vertically
Partitioned Data": an active worker ``l`` of FDSKL holds the coefficients of its
random features and computes its share ``f^l(x) = sum_{j in Lambda^l} alpha_j
sqrt(2) cos(w_j^T x + b_j)`` of the model. An attack that reads shares (FDSKL's
``model-readout``) puts them in its info under :data:`DECISION_VALUES`, per worker:
the readings (``iterations``, ``samples``, ``values``: the share at a training
row with the coefficients of that iteration) and its estimate of the final
share on training rows (``rows``, ``final``; rows not listed take the baseline,
zero). The truth is rebuilt from the private store: the worker's ``alphas`` and
``alpha_features``, the run's phases, the shared seed and every worker's shard.
Estimates keyed like the truth (values) are scored as ``reconstruction-error``
scores them, beside.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.private_store import auxiliary_key, parse_truth_key, truth_key, value_key
from fedsec.registry import register
from fedsec.scoring.reconstruction import EpsilonParams, advantage, per_target, relative_error

DECISION_VALUES = "decision_values"
"""The info key under which an attack reports the decision-function values it read."""
PHASES = truth_key(None, "phases")


def training_matrix(truth: Mapping[str, Any]) -> np.ndarray:
    """Every worker's shard put together: training rows in index order, global columns."""
    blocks = []
    for key in truth:
        parsed = parse_truth_key(key)
        if parsed.party is not None and parsed.path[:1] == ("shard",) and parsed.path[-1] == "X":
            base = key[: -len("X")]
            blocks.append((np.asarray(truth[key], dtype=np.float64),
                           np.asarray(truth[base + "rows"]), np.asarray(truth[base + "columns"])))
    if not blocks:
        raise ValidationError("The ground truth holds no shard: score with the run's private "
                              "store.")
    X = np.zeros((max(rows.size for _, rows, _ in blocks), sum(c.size for _, _, c in blocks)))
    for values, rows, columns in blocks:
        X[np.ix_(np.argsort(np.argsort(rows)), columns)] = values
    return X


def shared_seed(truth: Mapping[str, Any]) -> bytes:
    """The seed of the random directions, from any holder's key material."""
    from fedsec.protocols.fdskl import tags

    for key, value in truth.items():
        parsed = parse_truth_key(key)
        if parsed.path == ("key", tags.SHARED_SEED_KEY) and isinstance(value, bytes):
            return value
    raise ValidationError(f"The ground truth holds no {tags.SHARED_SEED_KEY} key.")


def kernel_width(X: np.ndarray, facts: Mapping[str, Any]) -> float:
    """The width the run used: as the attack saw it, else by the ``scale`` rule from the pooled
    training rows (what FDSKL's column statistics sum to)."""
    from fedsec.protocols.fdskl import random_features as rf

    width = float(facts.get("width", 0.0))
    if width > 0:
        return width
    if facts.get("width_rule", "scale") != "scale":
        raise ValidationError(
            "The kernel width is unknown: the adversary saw no width message and the run set "
            f"it by the {facts.get('width_rule')!r} rule; score an adversary that saw it.")
    return float(rf.scale_width(float(X.sum()), float((X**2).sum()), X.size, X.shape[1],
                                kernel=str(facts["kernel"])))


def true_function(truth: Mapping[str, Any], worker: str, facts: Mapping[str, Any]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The training rows, and the worker's features: feature indices, directions, phases and
    final coefficients."""
    from fedsec.protocols.fdskl import random_features as rf
    from fedsec.protocols.fdskl import tags

    alpha = np.asarray(truth[value_key(worker, tags.PRIVATE_ALPHAS)], dtype=np.float64)
    feats = np.asarray(truth[value_key(worker, tags.PRIVATE_ALPHA_FEATURES)], dtype=np.int64)
    X = training_matrix(truth)
    bank = rf.FeatureBank(shared_seed(truth), X.shape[1], kernel=str(facts["kernel"]),
                          width=kernel_width(X, facts))
    W = bank.directions(0, int(feats.max()) + 1 if feats.size else 0)[feats]
    b = np.asarray(truth[PHASES], dtype=np.float64)[feats]
    return X, feats, W, b, alpha


def fresh_errors(truth: Mapping[str, Any], function: Mapping[str, Any], W: np.ndarray,
                 b: np.ndarray, alpha: np.ndarray) -> dict[str, float]:
    """The relative error at the held-out rows (no party's) of a share given as coefficients
    ``(c, s)`` of ``sqrt(2) [cos, -sin](w_j^T x)`` over the worker's features, and the zero
    baseline's."""
    from fedsec.protocols.fdskl import random_features as rf

    key = auxiliary_key("X")
    if key not in truth or not W.shape[0]:
        return {}
    X = np.asarray(truth[key], dtype=np.float64)
    target = rf.feature_scores(X, W, b, alpha)
    c = np.asarray(function["coefficients"], dtype=np.float64)
    Z = X @ W.T
    estimate = np.sqrt(2.0) * (np.cos(Z) @ c[:W.shape[0]] - np.sin(Z) @ c[W.shape[0]:])
    return {"fresh_error": relative_error(estimate, target),
            "baseline_fresh_error": relative_error(np.zeros_like(target), target)}


def true_shares(function: tuple[np.ndarray, ...], facts: Mapping[str, Any],
                iterations: np.ndarray, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The worker's final share at every training row, and its share at each reading
    (``samples[k]`` with the coefficients of iteration ``iterations[k]``), from its
    :func:`true_function`."""
    from fedsec.protocols.fdskl import random_features as rf

    X, feats, W, b, alpha = function
    final = rf.feature_scores(X, W, b, alpha)
    r, T, decay = int(facts["features_per_iteration"]), int(facts["n_iterations"]), facts["decay"]
    read = np.zeros(samples.size)
    for start in range(0, samples.size, 512):
        stop = min(start + 512, samples.size)
        phi = rf.feature_map(X[samples[start:stop]] @ W.T + b)
        before = feats[None, :] < (iterations[start:stop, None] * r)
        scale = float(decay) ** (iterations[start:stop] - T).astype(float)
        read[start:stop] = (phi * before) @ alpha * scale
    return final, read


@register("scorer", "decision-function")
class DecisionFunction(Scorer):
    """A worker's share of the decision function read at training rows, against the share its
    coefficients make (FDSKL model privacy).

    A worker's decision function read at training rows, against the one its alphas make.

    Per worker read: ``readout_error`` (relative error of the readings against the share
    at the same rows and iterations: 0 is an exact read), ``relative_error`` (of the final
    share on every training row, rows not read at the baseline), ``fraction_rows_read`` and
    ``sign_agreement`` (read rows whose final share has the estimated sign); the baseline
    is zero everywhere. Estimates keyed like the truth are scored as relative errors too.
    """

    Params = EpsilonParams
    reads = frozenset({"values"})
    recovers = "the decision function of {what}"
    glossary: ClassVar[Mapping[str, str]] = {
        "readout_error": "relative error of the shares read, against the true share at the same "
                         "row with the coefficients of the same iteration.",
        "relative_error": "||estimate - truth|| / ||truth|| of each target (a worker's final share "
                          "on every training row; an estimated value), averaged.",
        "fraction_rows_read": "the fraction of training rows at which a worker's share was read.",
        "sign_agreement": "the fraction of rows read whose final share has the estimated sign.",
        "fresh_error": "relative error of a share solved as a function, at the held-out rows no "
                       "party holds (its baseline, zero, scores 1).",
        "advantage": "1 - error / baseline error (the baseline: zero; 1 is exact recovery).",
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        from fedsec.protocols.fdskl import tags

        targets = per_target(reconstruction, truth,
                             lambda e, t: {"relative_error": relative_error(e, t)})
        decision = dict(reconstruction.info.get(DECISION_VALUES, {}))
        facts = reconstruction.info
        for worker, read in sorted(decision.items()):
            iterations = np.asarray(read["iterations"], dtype=np.int64)
            samples = np.asarray(read["samples"], dtype=np.int64)
            function = true_function(truth, worker, facts)
            final, at_reads = true_shares(function, facts, iterations, samples)
            estimate = np.zeros_like(final)
            rows = np.asarray(read["rows"], dtype=np.int64)
            estimate[rows] = np.asarray(read["final"], dtype=np.float64)
            targets[value_key(worker, tags.PRIVATE_ALPHAS)] = {
                "readout_error": relative_error(np.asarray(read["values"]), at_reads),
                "relative_error": relative_error(estimate, final),
                "baseline_relative_error": relative_error(np.zeros_like(final), final),
                "fraction_rows_read": rows.size / final.size,
                "sign_agreement": float((np.sign(estimate[rows]) == np.sign(final[rows])).mean())
                if rows.size else float("nan"),
            }
            if "function" in read:
                _, feats, W, b, alpha = function
                if list(read["function"]["features"]) == feats.tolist():
                    targets[value_key(worker, tags.PRIVATE_ALPHAS)].update(
                        fresh_errors(truth, read["function"], W, b, alpha))
        errors = np.array([t["relative_error"] for t in targets.values()])
        base = np.array([t["baseline_relative_error"] for t in targets.values()
                         if "baseline_relative_error" in t])
        error = float(errors.mean()) if errors.size else float("nan")
        baseline_error = float(base.mean()) if base.size else float("nan")
        reads = [t["readout_error"] for t in targets.values() if "readout_error" in t]
        fresh = [t["fresh_error"] for t in targets.values() if "fresh_error" in t]
        fresh_base = [t["baseline_fresh_error"] for t in targets.values()
                      if "baseline_fresh_error" in t]
        return {"n_targets": len(targets), "epsilon": self.params.epsilon,
                "relative_error": error, "baseline_relative_error": baseline_error,
                "advantage": advantage(error, baseline_error),
                "fraction_recovered": float((errors <= self.params.epsilon).mean())
                if errors.size else 0.0,
                "readout_error": float(np.max(reads)) if reads else float("nan"),
                "fresh_error": float(np.mean(fresh)) if fresh else float("nan"),
                "baseline_fresh_error": float(np.mean(fresh_base)) if fresh_base else float("nan"),
                "per_target": targets}
