"""The model FedCG trains: random Nyström kernel regularized least squares (RRLS).

Damiani, Rodina, Decherchi, "A Hybrid Federated Kernel Regularized Least Squares Algorithm"
(2024), section 2.1: the decision scores of rows ``X`` are ``k(X, W) alpha``, an RBF kernel
block against the landmarks ``W`` (one width, or one per landmark) times the coefficients
the conjugate gradient solved for; the class is the sign of one column (binary) or the
argmax over the one-vs-rest columns (:func:`.krls.predict_labels`). The evaluator builds it
from the landmarks, widths and coefficients it assembles; it never crosses the network.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedsec.estimators import check_features
from fedsec.protocols.fedcg import krls


@dataclass(frozen=True, kw_only=True)
class KRLSModel:
    """Landmarks ``W`` (m × d, the dataset's columns), widths ``gamma`` (a scalar or m),
    coefficients ``alpha`` (m × outputs).

    Examples
    --------
    >>> model = KRLSModel(landmarks=np.array([[0.0], [1.0]]), gamma=1.0,
    ...                   alpha=np.array([[1.0], [-1.0]]))
    >>> model.predict(np.array([[0.1], [0.9]])).tolist()
    [1, 0]
    """

    landmarks: np.ndarray
    gamma: float | np.ndarray
    alpha: np.ndarray

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """The scores ``k(X, W) alpha`` (n × outputs: one column for a binary task)."""
        X = check_features(X, self.landmarks.shape[1], model="KRLSModel")
        return krls.rbf_block(X, self.landmarks, self.gamma) @ self.alpha

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class codes ``0 .. n_classes - 1`` (the dataset's label encoding)."""
        return krls.predict_labels(self.decision_function(X))


def krls_model(W: np.ndarray, gamma: float | np.ndarray, alpha: np.ndarray) -> KRLSModel:
    """A model holding its own copies of the landmarks, widths and coefficients."""
    widths: float | np.ndarray = (float(gamma) if np.isscalar(gamma)  # type: ignore[arg-type]
                                  else np.array(gamma, dtype=np.float64))
    return KRLSModel(landmarks=np.array(W, dtype=np.float64), gamma=widths,
                     alpha=np.array(alpha, dtype=np.float64))
