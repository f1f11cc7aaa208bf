"""The models of NRI-DC (the master's h, each worker's own) and how they are scored.

Nosaka and Yoshise (arXiv:2403.02780), section 4: logistic regression,
multi-layer perceptron and random forest from scikit-learn "with default
parameters", scored by ROC-AUC on a shared test set. We keep those defaults
except for logistic regression's iteration limit (raised so that it converges
on anchors labelled by a linear rule, which are separable) and take
``random_state`` from the run's seeded streams; the default MLP stops before
it converges on these small sets, as it did in the paper, and its
convergence warning is silenced. A training set with a single class yields a constant
model (scikit-learn refuses to fit one), which scores an ROC-AUC of 0.5.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier

from fedsec.errors import UnknownNameError, ValidationError

MODELS = ("logistic", "mlp", "random-forest")


class ConstantClassifier:
    """Predicts one class everywhere (what a single-class training set allows).

    Examples
    --------
    >>> ConstantClassifier(1).predict(np.zeros((2, 3))).tolist()
    [1, 1]
    """

    def __init__(self, label: int) -> None:
        self.label = int(label)
        self.classes_ = np.array([self.label])

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.full(np.shape(X)[0], self.label, dtype=np.int64)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return np.ones((np.shape(X)[0], 1))


@dataclass(frozen=True, kw_only=True)
class WorkerModels:
    """NRI-DC's result: every worker's own model (trained on the anchor and the master's
    predictions for it), in worker order. The run's metrics average the workers' scores.

    ``predict`` and ``predict_proba`` answer for every worker at once (the first axis is the
    worker); ``model[name]`` is one worker's scikit-learn estimator.

    Examples
    --------
    >>> both = WorkerModels(names=("a", "b"), estimators=(ConstantClassifier(0),
    ...                     ConstantClassifier(1)), n_classes=2)
    >>> both.predict(np.zeros((3, 1))).tolist()
    [[0, 0, 0], [1, 1, 1]]
    >>> both["b"].predict(np.zeros((1, 1))).tolist()
    [1]
    """

    names: tuple[str, ...]
    estimators: tuple[Any, ...]
    n_classes: int

    def __getitem__(self, name: str) -> Any:
        if name not in self.names:
            raise UnknownNameError("worker", name, self.names)
        return self.estimators[self.names.index(name)]

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class codes, ``n_workers x n_samples``: row ``i`` is worker ``names[i]``'s."""
        return np.stack([np.asarray(m.predict(X), dtype=np.int64) for m in self.estimators])

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Class probabilities, ``n_workers x n_samples x n_classes`` (0 for classes a
        worker's model never saw)."""
        return np.stack([probabilities(m, X, self.n_classes) for m in self.estimators])


def make_model(kind: str, random_state: int) -> Any:
    """An unfitted scikit-learn classifier of ``kind`` (one of :data:`MODELS`)."""
    if kind == "logistic":
        return LogisticRegression(max_iter=2000)
    if kind == "mlp":
        return MLPClassifier(random_state=random_state)
    if kind == "random-forest":
        return RandomForestClassifier(random_state=random_state)
    raise ValidationError(f"Unknown model {kind!r}; use one of {MODELS}.")


def fit(kind: str, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> Any:
    """Fit a model of ``kind`` with a ``random_state`` drawn from ``rng`` (always drawn).

    Examples
    --------
    >>> model = fit("logistic", np.array([[0.0], [1.0]]), np.array([0, 1]),
    ...             np.random.default_rng(0))
    >>> model.predict(np.array([[2.0]])).tolist()
    [1]
    """
    random_state = int(rng.integers(0, 2**31 - 1))
    labels = np.unique(y)
    if labels.size < 2:
        return ConstantClassifier(int(labels[0]) if labels.size else 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return make_model(kind, random_state).fit(X, y)


def probabilities(model: Any, X: np.ndarray, n_classes: int) -> np.ndarray:
    """``n x n_classes`` class probabilities; classes the model never saw get 0."""
    out = np.zeros((np.shape(X)[0], n_classes))
    out[:, np.asarray(model.classes_, dtype=np.int64)] = model.predict_proba(X)
    return out


def roc_auc(y: np.ndarray, proba: np.ndarray) -> float:
    """ROC-AUC: of the positive class (binary) or one-versus-rest macro average.

    Examples
    --------
    >>> roc_auc(np.array([0, 1]), np.array([[0.8, 0.2], [0.3, 0.7]]))
    1.0
    """
    n_classes = proba.shape[1]
    if n_classes == 2:
        return float(roc_auc_score(y, proba[:, 1]))
    rows = proba.sum(axis=1, keepdims=True)
    proba = np.where(rows > 0, proba / np.where(rows > 0, rows, 1.0), 1.0 / n_classes)
    return float(roc_auc_score(y, proba, multi_class="ovr", labels=np.arange(n_classes)))


def evaluate(model: Any, X: np.ndarray, y: np.ndarray, n_classes: int) -> dict[str, float]:
    """ROC-AUC and accuracy of ``model`` on ``(X, y)``."""
    proba = probabilities(model, X, n_classes)
    return {"roc_auc": roc_auc(y, proba),
            "accuracy": float((np.asarray(model.predict(X)) == y).mean())}
