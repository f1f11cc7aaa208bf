"""Linear-algebra plumbing of the completers: leading eigenpairs, BLAS threads.

Leading eigenpairs come from a dense eigendecomposition for small matrices and
from ARPACK's Lanczos iteration for large ones. The iterative completers run
thousands of small dense operations; multi-threaded BLAS makes those slower,
and dramatically so when other processes compete for the cores (measured:
rank alternation on 50 points took 16 s instead of 0.2 s next to two busy
processes on 2 cores; Alternating Descent on 1,050 points took 6-10 s
instead of 2.3 s). :func:`blas_threads` pins BLAS to one thread for small
problems and for loops of small operations.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

# Below this size a full dense eigendecomposition is cheaper than Lanczos.
DENSE_LIMIT = 400
# Below this many points one BLAS thread is faster than several.
SINGLE_THREAD_LIMIT = 500


@contextlib.contextmanager
def blas_threads(n_points: int | None) -> Iterator[None]:
    """Limit BLAS to one thread while working on fewer than 500 points.

    ``n_points=None`` limits it whatever the size (for loops of small
    operations). Uses threadpoolctl (a dependency of scikit-learn) when
    present; does nothing otherwise or for larger problems.
    """
    if n_points is not None and n_points >= SINGLE_THREAD_LIMIT:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn brings it
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


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
