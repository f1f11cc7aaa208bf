"""Leading eigenpairs of a symmetric matrix, dense or by Lanczos for large ones."""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

# Below this size a full dense eigendecomposition is cheaper than Lanczos.
DENSE_LIMIT = 400


def leading_eigenpairs(A: np.ndarray, k: int, rng: np.random.Generator
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` eigenpairs of symmetric ``A`` with the largest ``|eigenvalue|``.

    Returns eigenvalues (by decreasing magnitude) and eigenvectors as columns.
    Uses ARPACK (started from an ``rng`` vector, so the result is reproducible)
    when ``A`` is large and ``k`` small, the dense solver otherwise.
    """
    n = A.shape[0]
    k = min(k, n)
    if n > DENSE_LIMIT and k < n // 4:
        try:
            values, vectors = eigsh(A, k=k, which="LM", v0=rng.uniform(-1.0, 1.0, n))
        except ArpackNoConvergence:
            values, vectors = np.linalg.eigh(A)
    else:
        values, vectors = np.linalg.eigh(A)
    order = np.argsort(-np.abs(values), kind="stable")[:k]
    return values[order], vectors[:, order]


def top_eigenpairs(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest (signed) eigenpairs of symmetric ``A``, dense solver."""
    values, vectors = np.linalg.eigh(A)
    return values[::-1][:k], vectors[:, ::-1][:, :k]
