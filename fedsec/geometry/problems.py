"""Small localisation problems: points, landmarks and the partial EDM an observer sees.

The shape of FedCG's server view: distances from every point to every landmark
and between landmarks are known, distances between points are not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedsec.geometry.edm import assemble_edm, edm, squared_distances
from fedsec.validation import check_int


@dataclass(frozen=True)
class LandmarkProblem:
    """Points ``X`` (first in ``D``), landmarks ``W``, the partial EDM ``D`` and its ``mask``."""

    X: np.ndarray
    W: np.ndarray
    D: np.ndarray
    mask: np.ndarray

    def error(self, D_hat: np.ndarray) -> float:
        """Relative Frobenius error of a completion on the point-to-point block."""
        n = self.X.shape[0]
        truth = edm(self.X)
        return float(np.linalg.norm(D_hat[:n, :n] - truth) / np.linalg.norm(truth))


def landmark_problem(n_points: int, n_landmarks: int, *, rng: np.random.Generator,
                     dim: int = 2) -> LandmarkProblem:
    """Points and landmarks drawn uniformly in the unit cube (points first).

    Examples
    --------
    >>> problem = landmark_problem(4, 3, rng=np.random.default_rng(0))
    >>> problem.D.shape, int(problem.mask.sum())
    ((7, 7), 37)
    """
    n_points = check_int(n_points, owner="landmark_problem", name="n_points", min_value=1)
    n_landmarks = check_int(n_landmarks, owner="landmark_problem", name="n_landmarks",
                            min_value=1)
    dim = check_int(dim, owner="landmark_problem", name="dim", min_value=1)
    X, W = rng.random((n_points, dim)), rng.random((n_landmarks, dim))
    D, mask = assemble_edm(None, squared_distances(X, W), squared_distances(W))
    return LandmarkProblem(X=X, W=W, D=D, mask=mask)
