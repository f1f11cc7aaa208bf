"""Euclidean distance geometry: what an attacker can rebuild from leaked distances.

A leaked kernel block gives the squared distances ``D_XW`` between n private
points X and m landmarks W (and possibly the landmark distances ``D_W``). The
hidden block ``D_X`` of the Euclidean distance matrix (EDM)
``D = [[D_X, D_XW], [D_XW^T, D_W]]`` is then an EDM completion problem, the
security analysis of section 4 of Damiani, Rodina, Decherchi, "A Hybrid
Federated Kernel Regularized Least Squares Algorithm" (2024, the FedCG paper):

- :mod:`fedsec.geometry.edm`: squared distances, the EDM test, classical
  multidimensional scaling, Procrustes alignment, the closed-form Nyström
  (Schur-complement) completion of the hidden block and :func:`assemble_edm`,
  which builds ``D`` and its mask of known entries;
- :mod:`fedsec.geometry.completion`: the five completion algorithms the paper
  compares (Alternating Descent, Rank Alternation, semidefinite relaxation,
  OptSpace, Soft-Impute) and the :func:`complete` dispatcher. Each algorithm
  lives in its own module under :mod:`fedsec.geometry.completers`;
- :mod:`fedsec.geometry.sphere_prior`: points known only to lie on a sphere around the
  landmarks' affine hull (fewer landmarks than dimensions + 1), placed at the posterior mean
  under an isotropic Gaussian prior fitted to the distances;
- :mod:`fedsec.geometry.problems`: small random problems of that shape, for
  trying the algorithms (:func:`landmark_problem`).

Examples
--------
>>> import numpy as np
>>> from fedsec.geometry import assemble_edm, complete, squared_distances
>>> rng = np.random.default_rng(0)
>>> X, W = rng.random((20, 2)), rng.random((6, 2))
>>> D, mask = assemble_edm(None, squared_distances(X, W), squared_distances(W))
>>> D_hat = complete(D, mask, 2, "rank-alternation", rng=rng)
>>> D_hat.shape
(26, 26)
"""

from __future__ import annotations

from fedsec.geometry.completion import (
    METHODS,
    alternating_descent,
    complete,
    optspace,
    rank_alternation,
    semidefinite_relaxation,
    soft_impute,
)
from fedsec.geometry.edm import (
    assemble_edm,
    classical_mds,
    edm,
    is_edm,
    nystrom_completion,
    procrustes_align,
    squared_distances,
)
from fedsec.geometry.problems import LandmarkProblem, landmark_problem

__all__ = [
    "METHODS",
    "LandmarkProblem",
    "alternating_descent",
    "assemble_edm",
    "classical_mds",
    "complete",
    "edm",
    "is_edm",
    "landmark_problem",
    "nystrom_completion",
    "optspace",
    "procrustes_align",
    "rank_alternation",
    "semidefinite_relaxation",
    "soft_impute",
    "squared_distances",
]
