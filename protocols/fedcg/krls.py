"""Random Nyström kernel regularized least squares (RRLS): the maths FedCG runs on.

Damiani, Rodina, Decherchi, "A Hybrid Federated Kernel Regularized Least
Squares Algorithm" (2024), sections 2.1–2.3, read as in the project's
SEEDS.md: an RBF kernel ``k(x, w) = exp(-gamma ||x - w||^2)`` between n points
and m landmarks factorises over feature groups, so the n×m block is the
Hadamard product of blocks each cell owner computes alone; the model solves
``(K^T K + lambda I) alpha = K^T Y`` by conjugate gradient; multiclass tasks
are one-vs-rest columns of ``Y``. Pure functions on arrays; the protocols
orchestrate who computes what.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from fedsec.errors import ValidationError

LANDMARK_METHODS = ("P", "U", "N")


def squared_distances(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Pairwise squared Euclidean distances (n×m), clipped at zero."""
    d = (X**2).sum(axis=1)[:, None] + (W**2).sum(axis=1)[None, :] - 2.0 * X @ W.T
    return np.maximum(d, 0.0)


def rbf_block(X: np.ndarray, W: np.ndarray, gamma: float | np.ndarray) -> np.ndarray:
    """``exp(-gamma_j ||x_i - w_j||^2)``; ``gamma`` is one width or one per landmark.

    Examples
    --------
    >>> rbf_block(np.zeros((1, 2)), np.array([[1.0, 0.0]]), 0.5).round(4).tolist()
    [[0.6065]]
    """
    widths = np.asarray(gamma, dtype=np.float64)
    if widths.ndim == 1:
        widths = widths[None, :]  # one width per landmark (column)
    return np.exp(-widths * squared_distances(X, W))


def hadamard(blocks: Sequence[np.ndarray]) -> np.ndarray:
    """Element-wise product of kernel blocks (the full kernel of a cohort)."""
    out = np.array(blocks[0], dtype=np.float64, copy=True)
    for block in blocks[1:]:
        out *= block
    return out


def group_blocks(X: np.ndarray, W: np.ndarray, groups: Sequence[np.ndarray],
                 gamma: float | np.ndarray) -> list[np.ndarray]:
    """One kernel block per feature group; their Hadamard product is ``rbf_block(X, W, gamma)``."""
    return [rbf_block(X[:, cols], W[:, cols], gamma) for cols in groups]


def scale_gamma(total_sum: float, total_squares: float, count: int, n_features: int) -> float:
    """scikit-learn's ``gamma="scale"``: ``1 / (n_features * Var(X))`` from pooled sums."""
    mean = total_sum / count
    variance = total_squares / count - mean**2
    return 1.0 / (n_features * variance) if variance > 0 else 1.0 / n_features


def make_landmarks(method: str, n_landmarks: int, n_features: int, rng: np.random.Generator, *,
                   mean: np.ndarray | None = None, std: np.ndarray | None = None,
                   pool_size: int | None = None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Landmarks by method P, U or N, drawn from the clients' shared generator.

    Returns ``(W, rows)``: for U and N the landmark matrix (``rows`` None); for
    P the training rows to use (``W`` None: their features are held by the
    cell owners, who must share them).
    """
    if method == "P":
        if pool_size is None or n_landmarks > pool_size:
            raise ValidationError(
                f"P landmarks sample {n_landmarks} training rows but only {pool_size} exist; "
                "lower n_landmarks."
            )
        return None, np.sort(rng.choice(pool_size, size=n_landmarks, replace=False))
    if method == "U":
        return rng.uniform(0.0, 1.0, size=(n_landmarks, n_features)), None
    if method == "N":
        if mean is None or std is None:
            raise ValidationError("N landmarks need the training mean and standard deviation.")
        return rng.normal(mean, std, size=(n_landmarks, n_features)), None
    raise ValidationError(f"Unknown landmark method {method!r}; use one of {LANDMARK_METHODS}.")


def jittered_gamma(gamma: float, jitter: float, n_landmarks: int,
                   rng: np.random.Generator) -> float | np.ndarray:
    """``gamma_j = gamma * (1 + u_j)``, ``u_j ~ U(0, jitter)``: a random width per landmark."""
    if jitter == 0:
        return gamma
    return gamma * (1.0 + rng.uniform(0.0, jitter, size=n_landmarks))


def label_matrix(y: np.ndarray, n_classes: int) -> np.ndarray:
    """±1 targets: one column for a binary task, one per class (one-vs-rest) otherwise."""
    y = np.asarray(y)
    if n_classes <= 2:
        return np.where(y == 1, 1.0, -1.0)[:, None]
    return np.where(y[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)


def predict_labels(scores: np.ndarray) -> np.ndarray:
    """Class codes from decision scores (sign for one column, argmax otherwise)."""
    if scores.shape[1] == 1:
        return (scores[:, 0] > 0).astype(np.int64)
    return scores.argmax(axis=1).astype(np.int64)


def recall_precision(y_true: np.ndarray, predicted: np.ndarray, *,
                     binary: bool, positive: int | None = None) -> tuple[float, float]:
    """Recall and precision of predicted class codes, as the paper's tables report them:
    of class ``positive`` when given, else of class 1 (the ``+1`` column of
    :func:`label_matrix`) for a binary task and their unweighted mean over the classes found
    in ``y_true`` or ``predicted`` otherwise (scikit-learn's ``average="macro"``); 0 for a
    class never present or never predicted.

    >>> recall_precision(np.array([1, 1, 0, 0]), np.array([1, 0, 1, 0]), binary=True)
    (0.5, 0.5)
    >>> recall_precision(np.array([1, 1, 0, 0]), np.array([1, 1, 1, 0]), binary=True,
    ...                  positive=0)
    (0.5, 1.0)
    >>> recall_precision(np.array([0, 1, 2]), np.array([0, 1, 1]), binary=False)
    (0.6666666666666666, 0.5)
    """
    y = np.asarray(y_true, dtype=np.int64)
    p = np.asarray(predicted, dtype=np.int64)
    if positive is not None:
        classes = np.array([positive])
    else:
        classes = np.array([1]) if binary else np.union1d(y, p)
    is_true, is_predicted = y[:, None] == classes, p[:, None] == classes
    hits = (is_true & is_predicted).sum(axis=0).astype(float)
    actual, called = is_true.sum(axis=0), is_predicted.sum(axis=0)
    recall = np.divide(hits, actual, out=np.zeros_like(hits), where=actual > 0)
    precision = np.divide(hits, called, out=np.zeros_like(hits), where=called > 0)
    return float(recall.mean()), float(precision.mean())


@dataclass(frozen=True)
class CGResult:
    """Solution, epochs run and the squared residual norm per epoch."""

    alpha: np.ndarray
    epochs: int
    residuals: tuple[float, ...]
    converged: bool


def conjugate_gradient(
    apply_A: Callable[[np.ndarray, int], np.ndarray], residual0: np.ndarray, alpha0: np.ndarray,
    *, tol: float, max_epochs: int,
    on_epoch: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
) -> CGResult:
    """Column-wise conjugate gradient from a given start and its residual ``b - A alpha0``.

    ``apply_A(P, epoch)`` returns ``A P`` for the current directions (the
    federated protocols compute it through the network); ``on_epoch(epoch,
    alpha, P)`` lets the caller broadcast the new state. Stops when every
    column's squared residual is below ``tol`` (the paper's ``err < toll``).

    Examples
    --------
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> res = conjugate_gradient(lambda P, e: A @ P, np.array([[1.0], [2.0]]), np.zeros((2, 1)),
    ...                          tol=1e-20, max_epochs=10)
    >>> np.allclose(A @ res.alpha, [[1.0], [2.0]]), res.epochs
    (True, 2)
    """
    alpha = np.array(alpha0, dtype=np.float64, copy=True)
    r = np.array(residual0, dtype=np.float64, copy=True)
    p = r.copy()
    rr = (r * r).sum(axis=0)
    history = [float(rr.max())]
    converged = bool(rr.max() < tol)
    epochs = 0
    while not converged and epochs < max_epochs:
        epochs += 1
        Ap = apply_A(p, epochs)
        pAp = (p * Ap).sum(axis=0)
        step = np.divide(rr, pAp, out=np.zeros_like(rr), where=pAp > 0)
        alpha += step * p
        r -= step * Ap
        rr_new = (r * r).sum(axis=0)
        history.append(float(rr_new.max()))
        converged = bool(rr_new.max() < tol)
        beta = np.divide(rr_new, rr, out=np.zeros_like(rr), where=rr > 0)
        p = r + beta * p
        rr = rr_new
        if on_epoch is not None:
            on_epoch(epochs, alpha, p)
    return CGResult(alpha=alpha, epochs=epochs, residuals=tuple(history), converged=converged)


def stop_bounds(K: np.ndarray, lam: float, Y: np.ndarray, alpha0: np.ndarray,
                alpha: np.ndarray, tol: float, K_test: np.ndarray) -> tuple[float, float]:
    """How far apart two solutions that both met CG's stopping rule may lie: relative, as a
    comparison measures it (the largest difference over the largest value), for ``alpha``
    and for the test scores ``K_test alpha``.

    CG on ``A alpha = b`` (``A = K^T K + lam I``, ``b = K^T Y``) stops once every column's
    squared residual is below ``tol`` times its start, whatever order its sums ran in. Two
    solutions with residuals ``r1``, ``r2`` differ by ``A^-1 (r1 - r2)``, so an entry of
    ``alpha`` by at most its row of ``A^-1`` (in norm) times ``|r1| + |r2|``, and a test score
    by its row of ``K_test A^-1`` times the same. Each residual is bounded by twice the larger
    of the stopping threshold and the solution's own residual (recomputed: rounding may leave
    it above the threshold CG's running residual met).

    Examples
    --------
    >>> K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> Y = np.array([[1.0], [0.0], [1.0]])
    >>> A = K.T @ K + 0.1 * np.eye(2)
    >>> exact = np.linalg.solve(A, K.T @ Y)
    >>> a, s = stop_bounds(K, 0.1, Y, np.zeros((2, 1)), exact, 1e-20, K)
    >>> bool(0 < a < 1e-8), bool(0 < s < 1e-8)
    (True, True)
    """
    gram = K.T @ K
    A = gram + lam * np.eye(len(gram))
    b = K.T @ Y
    start = np.linalg.norm(b - A @ alpha0, axis=0).max()
    own = np.linalg.norm(b - A @ alpha, axis=0).max()
    apart = 2.0 * 2.0 * max(float(np.sqrt(tol)) * float(start), float(own))  # |r1| + |r2|
    inverse = np.linalg.inv(A)
    moved_alpha = float(np.linalg.norm(inverse, axis=1).max()) * apart
    moved_scores = (float(np.linalg.norm(K_test @ inverse, axis=1).max()) * apart
                    if K_test.size else 0.0)
    scale, scores = float(np.abs(alpha).max()), float(np.abs(K_test @ alpha).max(initial=0.0))
    return (moved_alpha / scale if scale > 0 else moved_alpha,
            moved_scores / scores if scores > 0 else moved_scores)
