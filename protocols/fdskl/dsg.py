"""DSG: centralized doubly stochastic gradient kernel learning with a constant step.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data" (section 2.2 and eq. 7; Dai et al. 2014 with the
constant step the paper analyses): the reference FDSKL must match. Iteration
``t`` picks sample ``i_t``, draws feature ``(w_t, b_t)``, computes ``f(x_{i_t})
= sum_{j<t} alpha_j phi_j(x_{i_t})``, sets ``alpha_t = -gamma L'(f, y)
phi_t(x_{i_t})`` and scales every earlier alpha by ``1 - gamma lambda``.

Shared randomness comes from keys derived from the run seed, so FDSKL draws
exactly the same samples, directions and phases: the sample order (the active
workers' picks), the directions (the seed every worker regenerates ``w_j``
from) and the phases (in FDSKL, the offset of the worker Algorithm 3 leaves in,
see :mod:`protocols.fdskl`). Arguments ``w_j^T x_i + b_j`` already computed for
a sample are kept and reused when it is picked again (Algorithm 2, line 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from fedsec.backends import prg
from fedsec.errors import ValidationError
from fedsec.interfaces import CentralizedProtocol
from fedsec.outcomes import Outcome
from fedsec.protocols.fdskl import random_features as rf
from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.model import RandomFeatureModel, random_feature_model
from fedsec.registry import register
from fedsec.validation import check_choice, check_float, check_int

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset

PAPER = ("Gu, Dang, Li, Huang, Federated Doubly Stochastic Kernel Learning for Vertically "
         "Partitioned Data, 2020")
OWNER = "protocol 'dsg'"


@dataclass(frozen=True, kw_only=True)
class DSGParams:
    """Parameters of DSG (and of FDSKL, which adds its own).

    ``kernel_width`` 0 means scikit-learn's ``"scale"``: ``sigma^2 = d Var(X) / 2``
    from pooled statistics. ``block`` is how many iterations are vectorised
    together (the same model either way; in FDSKL one message carries a block).
    """

    _owner: ClassVar[str] = OWNER
    n_iterations: int = 6000
    """Iterations t: each picks one training sample and draws one random feature (w_t, b_t)."""
    kernel: str = "rbf"
    """The kernel the random features approximate: rbf, exp(-||x - y||^2 / (2 width^2)), or laplace,
    exp(-||x - y||_1 / width)."""
    kernel_width: float = 0.0
    """The kernel's width (sigma); 0: like scikit-learn's "scale", from pooled statistics (rbf:
    sigma^2 = n_features Var(X) / 2)."""
    loss: str = "logistic"
    """Loss L(f(x), y) of the paper's Table 1: square, logistic or smooth-hinge."""
    step: float = 0.1
    """Constant step size gamma of alpha_t = -gamma L'(f, y) phi_t(x); step * regularization must be
    < 1 (Theorem 4)."""
    regularization: float = 1e-3
    """Weight lambda: every earlier alpha is scaled by 1 - step * lambda each iteration."""
    block: int = 64
    """Iterations vectorised together (the same model either way; in FDSKL one message per tree edge
    carries a block)."""

    def __post_init__(self) -> None:
        owner = self._owner
        check_int(self.n_iterations, owner=owner, name="n_iterations", min_value=1)
        check_choice(self.kernel, owner=owner, name="kernel", choices=rf.KERNELS)
        check_float(self.kernel_width, owner=owner, name="kernel_width", min_value=0.0)
        check_choice(self.loss, owner=owner, name="loss", choices=rf.LOSSES)
        check_float(self.step, owner=owner, name="step", min_value=0.0, min_inclusive=False)
        check_float(self.regularization, owner=owner, name="regularization", min_value=0.0)
        if self.step * self.regularization >= 1.0:
            raise ValidationError(
                f"The 'step' and 'regularization' parameters of {owner} must satisfy "
                f"step * regularization < 1 (Theorem 4). Got {self.step} * "
                f"{self.regularization} instead."
            )
        check_int(self.block, owner=owner, name="block", min_value=1)


@dataclass(frozen=True)
class Schedule:
    """What the run's keys fix in advance: the sample of every iteration and the seeds."""

    samples: np.ndarray
    shared: bytes
    phases: bytes


def schedule(seed: int, n_samples: int, n_iterations: int) -> Schedule:
    """Sample order and seed material for a run (identical for DSG and FDSKL)."""
    picks = np.random.default_rng(rf.key_words(prg.simulation_key(seed, tags.SAMPLE_KEY)))
    return Schedule(samples=picks.integers(0, n_samples, size=n_iterations),
                    shared=prg.simulation_key(seed, tags.SHARED_SEED_KEY),
                    phases=prg.simulation_key(seed, tags.PHASE_KEY))


def signed_labels(y: np.ndarray, task: str, loss: str) -> np.ndarray:
    """Targets as the losses take them: ±1 for binary tasks, real values for regression."""
    if task == "binary":
        return 2.0 * np.asarray(y, dtype=float) - 1.0
    if task == "regression":
        if loss != "square":
            raise ValidationError(f"A regression task needs the square loss; got {loss!r}.")
        return np.asarray(y, dtype=float)
    raise ValidationError(
        "DSG and FDSKL learn binary classification or regression; this dataset has "
        f"task {task!r}. Use a binary dataset (e.g. breast_cancer)."
    )


def segment_starts(samples: np.ndarray, t0: int, last: np.ndarray) -> list[tuple[int, int, int]]:
    """Per iteration of a block, ``(sample, first feature, stop)`` still to compute.

    Arguments already computed for a sample (at its previous visits) are
    reused, so only features after its last visit are new. Updates ``last``.

    Examples
    --------
    >>> last = np.full(3, -1)
    >>> segment_starts(np.array([2, 0, 2]), 0, last)
    [(2, 0, 1), (0, 0, 2), (2, 1, 3)]
    """
    out = []
    for k, s in enumerate(samples.tolist()):
        t = t0 + k
        out.append((s, int(last[s]) + 1, t + 1))
        last[s] = t
    return out


def width_of(params: DSGParams, total: float, squares: float, count: int,
             n_features: int) -> float:
    """The kernel width: the user's, or ``"scale"`` from pooled sums."""
    if params.kernel_width > 0:
        return params.kernel_width
    return rf.scale_width(total, squares, count, n_features, kernel=params.kernel)


def train(params: DSGParams, X: np.ndarray, y: np.ndarray, seed: int,
          ) -> tuple[np.ndarray, rf.FeatureBank]:
    """Centralized DSG on ``X`` (rows) and signed targets ``y``; returns alphas and features."""
    plan = schedule(seed, X.shape[0], params.n_iterations)
    width = width_of(params, float(X.sum()), float((X**2).sum()), X.size, X.shape[1])
    bank = rf.FeatureBank(plan.shared, X.shape[1], kernel=params.kernel, width=width,
                          phase_material=plan.phases)
    T = params.n_iterations
    alpha = np.zeros(T)
    derivative = rf.loss_derivative(params.loss)
    decay = 1.0 - params.step * params.regularization
    last = np.full(X.shape[0], -1)
    saved: dict[int, np.ndarray] = {}
    for t0 in range(0, T, params.block):
        stop_block = min(t0 + params.block, T)
        for k, (s, start, stop) in enumerate(segment_starts(plan.samples[t0:stop_block], t0,
                                                            last)):
            t = t0 + k
            Z = bank.directions(start, stop) @ X[s] + bank.phases(start, stop)
            row = np.concatenate([saved[s], rf.feature_map(Z)]) if s in saved \
                else rf.feature_map(Z)
            saved[s] = row
            f = float(row[:t] @ alpha[:t])
            rf.dsg_step(alpha, t, row[t], f, y[s], derivative=derivative, step=params.step,
                        decay=decay)
    return alpha, bank


def evaluate(scores: np.ndarray, test: Dataset) -> dict[str, float]:
    """Test metrics of predictions ``scores`` (the evaluator's computation)."""
    if test.task == "regression":
        return {"mse": float(np.mean((scores - test.y) ** 2))}
    accuracy = float(((scores > 0).astype(int) == test.y).mean())
    return {"accuracy": accuracy, "test_error": 1.0 - accuracy}


def reference_outcome(params: DSGParams, train_set: Dataset, test: Dataset, seed: int) -> Outcome:
    """DSG on the pooled training set with the run's keys."""
    model, scores, width = _fit(params, train_set, np.asarray(train_set.X, dtype=float),
                                test, seed)
    metrics = {**evaluate(scores, test), "n_iterations": params.n_iterations,
               "kernel_width": width}
    return Outcome(metrics=metrics, values={"alpha": model.alpha, "test_scores": scores,
                                            "predictions": predictions(scores, test)},
                   model=model)


def _fit(params: DSGParams, train_set: Dataset, X: np.ndarray, test: Dataset, seed: int
         ) -> tuple[RandomFeatureModel, np.ndarray, float]:
    """The trained model, its test scores and the kernel width."""
    y = signed_labels(train_set.y, train_set.task, params.loss)
    alpha, bank = train(params, X, y, seed)
    model = random_feature_model(bank, alpha, train_set.task)
    return model, model.decision_function(test.X), bank.width


def predictions(scores: np.ndarray, test: Dataset) -> np.ndarray:
    """The predicted classes (the sign of the scores), or the predicted values (regression)."""
    return scores if test.task == "regression" else (np.asarray(scores) > 0).astype(float)


ROUNDING = 1e-15
"""The relative change of the input by which DSG's own sensitivity is measured."""


def rounding_sensitivity(params: DSGParams, train_set: Dataset, test: Dataset, seed: int,
                         reference: Outcome) -> dict[str, float]:
    """How far centralized DSG's ``alpha`` and test scores move (relative, largest entry)
    when every input moves by :data:`ROUNDING` relative: the recursion's own conditioning.

    A federated run whose sums are merely ordered differently can differ from the reference
    by this much without being wrong; the agreement check allows ten times it. (Long runs of
    the smooth-hinge loss move by 1e-4 here; short logistic runs by 1e-14.)
    """
    X = np.asarray(train_set.X, dtype=float)
    nudged = X * (1.0 + ROUNDING * np.random.default_rng(0).standard_normal(X.shape))
    model, scores, _ = _fit(params, train_set, nudged, test, seed)
    out = {}
    for key, value in (("alpha", model.alpha), ("test_scores", scores)):
        base = np.asarray(reference.values[key], dtype=float)
        scale = float(np.max(np.abs(base))) if base.size else 0.0
        diff = float(np.max(np.abs(value - base))) if base.size else 0.0
        out[key] = diff / scale if scale > 0 else diff
    return out


@register("protocol", "dsg")
class DSG(CentralizedProtocol):
    """Centralized DSG: one site holds every row and feature; no message is sent."""

    summary = "Centralized doubly stochastic kernel learning, constant step (FDSKL's reference)."
    paper = PAPER
    default_dataset = "breast_cancer"
    instead = "fdskl on a vertical partition"
    renamed_tags = tags.RENAMED
    Params = DSGParams

    def solve(self, train: Dataset, test: Dataset, seed: int) -> Outcome:
        return reference_outcome(self.params, train, test, seed)
