"""The model FDSKL (and DSG) trains: a sum of random Fourier features.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for Vertically Partitioned
Data" (2020), section 2.2: ``f(x) = sum_j alpha_j phi_j(x)`` with ``phi_j(x) = sqrt(2)
cos(w_j^T x + b_j)``; the class is the sign of ``f`` (binary tasks, labels 0 and 1), or ``f``
is the prediction (regression). The evaluator builds it from the directions and phases the
shared seed regenerates and the alphas the active workers hold; it never crosses the network.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedsec.estimators import check_features
from fedsec.protocols.fdskl import random_features as rf


@dataclass(frozen=True, kw_only=True)
class RandomFeatureModel:
    """Directions ``w_j`` (T × d, the dataset's columns), phases ``b_j`` (T), coefficients
    ``alpha`` (T), and the task (``binary`` or ``regression``).

    Examples
    --------
    >>> model = RandomFeatureModel(directions=np.zeros((1, 2)), phases=np.zeros(1),
    ...                            alpha=np.array([1.0]), task="binary")
    >>> model.predict(np.ones((1, 2))).tolist()
    [1]
    """

    directions: np.ndarray
    phases: np.ndarray
    alpha: np.ndarray
    task: str

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """``f(x)`` for every row of ``X``."""
        X = check_features(X, self.directions.shape[1], model="RandomFeatureModel")
        return rf.feature_scores(X, self.directions, self.phases, self.alpha)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class codes 0/1 (the sign of ``f``), or ``f`` itself for a regression task."""
        scores = self.decision_function(X)
        return scores if self.task == "regression" else (scores > 0).astype(np.int64)


def random_feature_model(bank: rf.FeatureBank, alpha: np.ndarray,
                         task: str) -> RandomFeatureModel:
    """The model of coefficients ``alpha`` over the first ``alpha.size`` features of ``bank``
    (which must hold the phase stream)."""
    n = alpha.size
    return RandomFeatureModel(directions=np.array(bank.directions(0, n)),
                              phases=np.array(bank.phases(0, n)),
                              alpha=np.array(alpha, dtype=np.float64), task=task)
