"""EDM completion: the five algorithms of the FedCG security analysis and a dispatcher.

Seed paper 000 (C. Damiani, Y. Rodina, S. Decherchi, "A Hybrid Federated
Kernel Regularized Least Squares Algorithm", 2024, section 4) frames the
attack on a leaked kernel block as completing ``D = [[D_X, D_XW], [D_XW^T,
D_W]]`` with ``D_X`` hidden, and compares five algorithms, each in its own
module under :mod:`fedsec.geometry.completers` with its paper:

- ``"alternating-descent"``, :func:`alternating_descent`: I. Dokmanic,
  R. Parhizkar, J. Ranieri, M. Vetterli, "Euclidean Distance Matrices:
  Essential Theory, Algorithms and Applications", IEEE Signal Processing
  Magazine 32(6):12-30, 2015 (Algorithm 4), and R. Parhizkar, "Euclidean
  Distance Matrices: Properties, Algorithms and Applications", PhD thesis,
  EPFL, 2013 (Algorithm 3.1);
- ``"rank-alternation"``, :func:`rank_alternation`: Dokmanic et al. 2015 (the
  alternating rank-based completion);
- ``"sdr"``, :func:`semidefinite_relaxation`: A. Y. Alfakih, A. Khandani,
  H. Wolkowicz, "Solving Euclidean Distance Matrix Completion Problems via
  Semidefinite Programming", Computational Optimization and Applications
  12:13-30, 1999; P. Biswas, Y. Ye, "Semidefinite Programming for Ad Hoc
  Wireless Sensor Network Localization", IPSN 2004; Dokmanic et al. 2015;
- ``"optspace"``, :func:`optspace`: R. H. Keshavan, A. Montanari, S. Oh,
  "Matrix Completion from a Few Entries", IEEE Transactions on Information
  Theory 56(6):2980-2998, 2010;
- ``"soft-impute"``, :func:`soft_impute`: R. Mazumder, T. Hastie,
  R. Tibshirani, "Spectral Regularization Algorithms for Learning Large
  Incomplete Matrices", JMLR 11:2287-2322, 2010 (Algorithm 1).

All share the signature ``(D, mask, dim, *, rng, max_iter, tol, progress,
...)`` and return a full symmetric N x N estimate with zero diagonal and
nonnegative entries. Whether the known entries are re-imposed is each
algorithm's own choice (documented per function): Rank Alternation and
Soft-Impute keep them; Alternating Descent, SDR and OptSpace return their
fitted model.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from fedsec.errors import UnknownNameError
from fedsec.geometry.completers.alternating_descent import alternating_descent
from fedsec.geometry.completers.optspace import optspace
from fedsec.geometry.completers.rank_alternation import rank_alternation
from fedsec.geometry.completers.sdr import SolverError, semidefinite_relaxation
from fedsec.geometry.completers.soft_impute import soft_impute
from fedsec.validation import param_error

METHODS = ("alternating-descent", "rank-alternation", "sdr", "optspace", "soft-impute")

_FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "alternating-descent": alternating_descent,
    "rank-alternation": rank_alternation,
    "sdr": semidefinite_relaxation,
    "optspace": optspace,
    "soft-impute": soft_impute,
}


def complete(D: Any, mask: Any, dim: int, method: str, *, rng: np.random.Generator,
             **options: Any) -> np.ndarray:
    """Complete a partially known EDM with the named method.

    Parameters
    ----------
    D : array_like, shape (N, N)
        Partially known squared distances (unknown entries may be NaN).
    mask : array_like of bool, shape (N, N)
        Symmetric; True where ``D`` is known.
    dim : int
        Embedding dimension of the points.
    method : str
        One of :data:`METHODS`.
    rng : numpy.random.Generator
        All the method's randomness.
    **options
        The method's keyword options (``max_iter``, ``tol``, ``progress`` and
        the method-specific ones).

    Returns
    -------
    numpy.ndarray, shape (N, N)
        The completed matrix.

    Raises
    ------
    UnknownNameError
        For a method not in :data:`METHODS`.
    ValidationError
        For bad inputs or an option the method does not take.

    Examples
    --------
    >>> from fedsec.geometry import edm, landmark_problem
    >>> rng = np.random.default_rng(0)
    >>> problem = landmark_problem(30, 6, rng=rng)
    >>> D_hat = complete(problem.D, problem.mask, 2, "alternating-descent", rng=rng, max_iter=300)
    >>> bool(np.allclose(D_hat[:30, :30], edm(problem.X), atol=1e-3))
    True
    """
    if method not in _FUNCTIONS:
        raise UnknownNameError("completion method", str(method), METHODS)
    function = _FUNCTIONS[method]
    accepted = [name for name, parameter in inspect.signature(function).parameters.items()
                if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "rng"]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise param_error(f"complete (method {method!r})", "options",
                          "keywords among " + ", ".join(map(repr, accepted)), unknown[0])
    return function(D, mask, dim, rng=rng, **options)


__all__ = [
    "METHODS",
    "SolverError",
    "alternating_descent",
    "complete",
    "optspace",
    "rank_alternation",
    "semidefinite_relaxation",
    "soft_impute",
]
