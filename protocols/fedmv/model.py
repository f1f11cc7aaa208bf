"""The model MVL and its federated variants train: view weights and the test-phase consensus.

Che et al., "Federated Multi-View Learning for Private Medical Data Integration and Analysis"
(ACM TIST 2022), the test phase of Algorithm 1: each view's image ``X_k W_k`` is its first
estimate, and the two averaging steps alternate until the consensus settles
(:func:`.maths.predict`); the class is the argmax of the consensus. One view alone has no
averaging to do: its scores are ``X W`` (the single-view baseline). The evaluator builds the
model from the final weights; it never crosses the network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fedsec.errors import ValidationError
from fedsec.estimators import check_features
from fedsec.protocols.fedmv import maths


@dataclass(frozen=True, kw_only=True)
class ConsensusHead:
    """Per view, the weights ``W_k`` and ``zeta_k``; the test phase's tolerance and step cap.

    Its input is one matrix per view (a view's columns, or features extracted from them).
    """

    weights: tuple[np.ndarray, ...]
    zetas: tuple[float, ...]
    tol: float = 1e-10
    max_steps: int = 1000

    def scores(self, views: Sequence[np.ndarray]) -> np.ndarray:
        """Class scores (n × classes) of rows given view by view."""
        if len(views) != len(self.weights):
            raise ValidationError(f"This model reads {len(self.weights)} views; got "
                                  f"{len(views)}.")
        if len(views) == 1:
            return np.asarray(views[0], dtype=np.float64) @ self.weights[0]
        return maths.predict([np.asarray(X, dtype=np.float64) for X in views], self.weights,
                             self.zetas, tol=self.tol, max_iter=self.max_steps)


@dataclass(frozen=True, kw_only=True)
class MultiViewModel:
    """A consensus head over the dataset's views: ``columns[k]`` are view ``k``'s columns.

    Examples
    --------
    >>> head = ConsensusHead(weights=(np.eye(2), -np.eye(2)), zetas=(1.0, 1.0))
    >>> model = MultiViewModel(columns=(np.array([0, 1]), np.array([2, 3])), head=head)
    >>> model.predict(np.array([[2.0, 0.0, 0.0, 1.0]])).tolist()
    [0]
    """

    columns: tuple[np.ndarray, ...]
    head: ConsensusHead

    @property
    def n_features(self) -> int:
        """The columns of the dataset it reads (every view's)."""
        return int(sum(cols.size for cols in self.columns))

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Class scores (the test phase's consensus); the argmax is the class."""
        X = check_features(X, self.n_features, model="MultiViewModel")
        return self.head.scores([X[:, cols] for cols in self.columns])

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class codes ``0 .. n_classes - 1`` (the dataset's label encoding)."""
        return np.argmax(self.decision_function(X), axis=1).astype(np.int64)


def consensus_head(weights: Sequence[np.ndarray], zeta: float, tol: float,
                   max_steps: int) -> ConsensusHead:
    """A head holding its own copies of the view weights, every view with weight ``zeta``."""
    return ConsensusHead(weights=tuple(np.array(W, dtype=np.float64) for W in weights),
                         zetas=(float(zeta),) * len(weights), tol=tol, max_steps=max_steps)


def multiview_model(columns: Sequence[Sequence[int] | np.ndarray], weights: Sequence[np.ndarray],
                    zeta: float, tol: float, max_steps: int) -> MultiViewModel:
    """The model of view weights ``weights`` over the dataset's ``columns``, view by view."""
    return MultiViewModel(columns=tuple(np.asarray(c, dtype=np.int64) for c in columns),
                          head=consensus_head(weights, zeta, tol, max_steps))
