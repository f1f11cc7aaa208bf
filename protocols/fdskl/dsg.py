"""DSG: centralized doubly stochastic gradient kernel learning with a constant step.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data" (section 2.2 and eq. 7; Dai et al. 2014 with the
constant step the paper analyses): the reference FDSKL must match. Iteration
``t`` picks sample ``i_t``, draws feature ``(w_t, b_t)``, computes ``f(x_{i_t})
= sum_{j<t} alpha_j phi_j(x_{i_t})``, sets ``alpha_t = -gamma L'(f, y)
phi_t(x_{i_t})`` and scales every earlier alpha by ``1 - gamma lambda``.

Shared randomness comes from keys derived from the run's secret seed, so FDSKL draws
exactly the same samples, directions and phases: the sample order (the active
workers' picks), the directions (the seed every worker regenerates ``w_j``
from) and the phases (in FDSKL, the offset of the worker Algorithm 3 leaves in,
see :mod:`protocols.fdskl`). Arguments ``w_j^T x_i + b_j`` already computed for
a sample are kept and reused when it is picked again (Algorithm 2, line 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import numpy as np

from fedsec.backends import prg
from fedsec.declare import Choice, Declared, Float, Int, owner_of
from fedsec.errors import ValidationError
from fedsec.interfaces import CentralizedProtocol
from fedsec.outcomes import Outcome
from fedsec.protocols.fdskl import batches, median_width, tags
from fedsec.protocols.fdskl import random_features as rf
from fedsec.protocols.fdskl.model import RandomFeatureModel, random_feature_model
from fedsec.protocols.fdskl.saved import SavedFeatures, last_visits
from fedsec.registry import register
from fedsec.seeding import keyed_generator

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset

PAPER = ("Gu, Dang, Li, Huang, Federated Doubly Stochastic Kernel Learning for Vertically "
         "Partitioned Data, 2020")
WIDTH_RULES = ("scale", "median")


@dataclass(frozen=True, kw_only=True)
class DSGParams(Declared):
    """Parameters of DSG (and of FDSKL, which adds its own).

    ``kernel_width`` 0 means scikit-learn's ``"scale"``: ``sigma^2 = d Var(X) / 2``
    from pooled statistics, or with ``width_rule="median"`` the median distance
    between seeded pairs of samples (:mod:`.median_width`). ``block`` is how many
    iterations are vectorised together (the same model either way; in FDSKL one
    message carries a block). ``batch_size`` and ``features_per_iteration`` make
    each iteration a mini-batch step (:mod:`.batches`).
    """

    n_iterations: Annotated[int, Int(min=1)] = 6000
    """Iterations t: each picks batch_size training samples and draws features_per_iteration random
    features (w, b) (one and one by default, as in the paper)."""
    kernel: Annotated[str, Choice(*rf.KERNELS)] = "rbf"
    """The kernel the random features approximate: rbf, exp(-||x - y||^2 / (2 width^2)), or laplace,
    exp(-||x - y||_1 / width)."""
    kernel_width: Annotated[float, Float(min=0.0)] = 0.0
    """The kernel's width (sigma); 0: like scikit-learn's "scale", from pooled statistics (rbf:
    sigma^2 = n_features Var(X) / 2)."""
    loss: Annotated[str, Choice(*rf.LOSSES)] = "logistic"
    """Loss L(f(x), y) of the paper's Table 1: square, logistic or smooth-hinge."""
    step: Annotated[float, Float(min=0.0, min_inclusive=False)] = 0.1
    """Constant step size gamma of alpha_t = -gamma L'(f, y) phi_t(x); step * regularization must be
    < 1 (Theorem 4)."""
    regularization: Annotated[float, Float(min=0.0)] = 1e-3
    """Weight lambda: every earlier alpha is scaled by 1 - step * lambda each iteration."""
    block: Annotated[int, Int(min=1)] = 64
    """Iterations vectorised together (the same model either way; in FDSKL one message per tree edge
    carries a block)."""
    batch_size: Annotated[int, Int(min=1)] = 1
    """Samples B per iteration: the step averages the B samples' functional gradients (Dai et al.'s
    mini-batch); 1 is the paper's one-sample iteration."""
    features_per_iteration: Annotated[int, Int(min=1)] = 1
    """Random features r drawn per iteration, each weighted 1/r (the kernel they approximate
    together); the model ends with n_iterations * r features."""
    width_rule: Annotated[str, Choice(*WIDTH_RULES)] = "scale"
    """How the width is set when kernel_width is 0: scale (pooled column statistics) or median (the
    median distance over width_pairs seeded pairs of samples; FDSKL sums the workers' partial
    distances along masked trees and the first active worker learns the sampled pairs' full
    distances)."""
    width_pairs: Annotated[int, Int(min=1)] = 1000
    """Pairs of samples whose distances the median width rule takes."""

    def __post_init__(self) -> None:
        owner = owner_of(self)
        if self.step * self.regularization >= 1.0:
            raise ValidationError(
                f"The 'step' and 'regularization' parameters of {owner} must satisfy "
                f"step * regularization < 1 (Theorem 4). Got {self.step} * "
                f"{self.regularization} instead."
            )
        if self.kernel_width > 0 and self.width_rule != "scale":
            raise ValidationError(
                f"The 'width_rule' parameter of {owner} applies only when kernel_width is 0; got "
                f"width_rule={self.width_rule!r} with kernel_width={self.kernel_width}. Drop one."
            )

    @property
    def n_features(self) -> int:
        """Random features the model ends with: ``n_iterations * features_per_iteration``."""
        return self.n_iterations * self.features_per_iteration


@dataclass(frozen=True)
class Schedule:
    """What the run's keys fix in advance: the sample of every iteration and the seeds."""

    samples: np.ndarray
    shared: bytes
    phases: bytes


def schedule(seed: int, n_samples: int, n_iterations: int, batch_size: int = 1) -> Schedule:
    """Sample order (``batch_size`` per iteration) and seed material (identical for DSG and
    FDSKL)."""
    picks = keyed_generator(prg.simulation_key(seed, tags.SAMPLE_KEY))
    return Schedule(samples=picks.integers(0, n_samples, size=n_iterations * batch_size),
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


def width_of(params: DSGParams, X: np.ndarray, seed: int) -> float:
    """The kernel width: the user's, the median distance of seeded pairs, or ``"scale"``."""
    if params.kernel_width > 0:
        return params.kernel_width
    if params.width_rule == "median":
        return median_width.centralized_width(X, seed, params.width_pairs, kernel=params.kernel)
    return rf.scale_width(float(X.sum()), float((X**2).sum()), X.size, X.shape[1],
                          kernel=params.kernel)


def train(params: DSGParams, X: np.ndarray, y: np.ndarray, seed: int,
          ) -> tuple[np.ndarray, rf.FeatureBank]:
    """Centralized DSG on ``X`` (rows) and signed targets ``y``; returns alphas and features."""
    B, r = params.batch_size, params.features_per_iteration
    plan = schedule(seed, X.shape[0], params.n_iterations, B)
    bank = rf.FeatureBank(plan.shared, X.shape[1], kernel=params.kernel,
                          width=width_of(params, X, seed), phase_material=plan.phases)
    T = params.n_iterations
    alpha = np.zeros(params.n_features)
    derivative = rf.loss_derivative(params.loss)
    decay = 1.0 - params.step * params.regularization
    last = np.full(X.shape[0], -1)
    saved = SavedFeatures(last_visits(plan.samples, X.shape[0], B))
    for t0 in range(0, T, params.block):
        stop_block = min(t0 + params.block, T)
        todo = batches.segments(plan.samples[t0 * B:stop_block * B], t0, last, batch_size=B,
                                features_per_iteration=r)
        for k in range(0, len(todo), B):
            t = t0 + k // B
            f, phis = np.empty(B), np.empty((B, r))
            for b, (s, start, stop) in enumerate(todo[k:k + B]):
                Z = bank.directions(start, stop) @ X[s] + bank.phases(start, stop)
                saved.add(s, rf.feature_map(Z, out=Z))
                row = saved.row(s)
                f[b] = row[:t * r] @ alpha[:t * r]
                phis[b] = row[t * r:(t + 1) * r]
            samples = [s for s, _, _ in todo[k:k + B]]
            alpha[t * r:(t + 1) * r] = batches.new_alphas(
                batches.batch_gradients(f, y[samples], derivative), phis, step=params.step)
            alpha[:t * r] *= decay
            saved.visited(t, samples)
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
    """Centralized doubly stochastic kernel learning, constant step (FDSKL's reference).

    Centralized DSG: one site holds every row and feature; no message is sent.
    """

    paper = PAPER
    default_dataset = "breast_cancer"
    instead = "fdskl on a vertical partition"
    renamed_tags = tags.RENAMED
    Params = DSGParams

    def solve(self, train: Dataset, test: Dataset, seed: int) -> Outcome:
        return reference_outcome(self.params, train, test, seed)
