"""Euclidean distance matrices: distances, the EDM test, MDS, alignment, Nyström completion.

Implements the basic geometry of

- I. Dokmanic, R. Parhizkar, J. Ranieri, M. Vetterli, "Euclidean Distance
  Matrices: Essential Theory, Algorithms and Applications", IEEE Signal
  Processing Magazine 32(6):12-30, 2015 ("DPRV15"): the EDM of a point set,
  the characterisation of EDMs through the double-centred Gram matrix
  ``-1/2 J D J`` (positive semidefinite, rank at most d), classical
  multidimensional scaling (their Algorithm 1) and the Procrustes alignment
  that removes the rigid motion MDS cannot see;
- the Nyström / Schur-complement completion of a hidden diagonal block from
  landmark distances, as used in the audit of seed paper 000 (Damiani, Rodina,
  Decherchi, "A Hybrid Federated Kernel Regularized Least Squares Algorithm",
  2024, section 4): the attacker's closed-form answer once the landmarks span
  the data's affine hull.

All functions are pure and take numpy arrays; points are rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedsec.geometry._checks import check_dim, described, float_matrix
from fedsec.validation import check_float, param_error


def squared_distances(A: Any, B: Any = None) -> np.ndarray:
    """Pairwise squared Euclidean distances between the rows of ``A`` and ``B``.

    Parameters
    ----------
    A : array_like, shape (n, d)
        Points as rows.
    B : array_like, shape (m, d), optional
        Second point set; ``A`` itself when omitted (then the result is exactly
        symmetric with a zero diagonal).

    Returns
    -------
    numpy.ndarray, shape (n, m)
        ``||a_i - b_j||^2``, clipped at 0 against rounding.

    Examples
    --------
    >>> squared_distances([[0.0, 0.0], [3.0, 4.0]])
    array([[ 0., 25.],
           [25.,  0.]])
    """
    owner = "squared_distances"
    A = float_matrix(A, owner=owner, name="A")
    same = B is None
    B = A if same else float_matrix(B, owner=owner, name="B")
    if B.shape[1] != A.shape[1]:
        raise param_error(owner, "B", f"an array with {A.shape[1]} columns like 'A'",
                          described(f"an array of shape {B.shape}"))
    # Centre both on A's mean: the expansion below then loses less to cancellation.
    centre = A.mean(axis=0) if A.shape[0] else np.zeros(A.shape[1])
    A0, B0 = A - centre, B - centre
    out = (np.einsum("ij,ij->i", A0, A0)[:, None] + np.einsum("ij,ij->i", B0, B0)[None, :]
           - 2.0 * (A0 @ B0.T))
    np.maximum(out, 0.0, out=out)
    if same:
        out = (out + out.T) / 2
        np.fill_diagonal(out, 0.0)
    return out


def edm(X: Any) -> np.ndarray:
    """The Euclidean distance matrix (squared distances) of the rows of ``X``.

    Examples
    --------
    >>> edm([[0.0], [1.0], [3.0]])
    array([[0., 1., 9.],
           [1., 0., 4.],
           [9., 4., 0.]])
    """
    return squared_distances(X)


def _centred_gram(D: np.ndarray) -> np.ndarray:
    """``-1/2 J D J`` with ``J = I - 11^T / n``, computed without forming J."""
    G = D - D.mean(axis=0, keepdims=True)
    G = G - G.mean(axis=1, keepdims=True)
    G = -0.5 * G
    return (G + G.T) / 2


def is_edm(D: Any, tol: float = 1e-8) -> bool:
    """Whether ``D`` is a Euclidean distance matrix (of squared distances).

    Checks, relative to ``max(|D|)``: square, symmetric, zero diagonal,
    nonnegative, and ``-1/2 J D J`` positive semidefinite (DPRV15, Theorem 1).

    Parameters
    ----------
    D : array_like, shape (n, n)
        Candidate matrix.
    tol : float, default 1e-8
        Relative tolerance for each test.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_edm(edm([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]))
    True
    >>> is_edm([[0.0, 1.0, 9.0], [1.0, 0.0, 1.0], [9.0, 1.0, 0.0]])  # 3 > 1 + 1
    False
    """
    tol = check_float(tol, owner="is_edm", name="tol", min_value=0.0)
    arr = np.asarray(D, dtype=float)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or not np.isfinite(arr).all():
        return False
    if arr.size == 0:
        return True
    slack = tol * max(float(np.max(np.abs(arr))), 1.0)
    if (np.max(np.abs(arr - arr.T)) > slack or np.max(np.abs(np.diag(arr))) > slack
            or arr.min() < -slack):
        return False
    return bool(np.linalg.eigvalsh(_centred_gram(arr)).min() >= -slack * arr.shape[0])


def classical_mds(D: Any, dim: int) -> np.ndarray:
    """Points whose EDM best matches ``D``: classical multidimensional scaling.

    Eigen-decomposes the double-centred Gram matrix ``G = -1/2 J D J`` and keeps
    the ``dim`` largest eigenvalues, clipped at 0 (DPRV15, Algorithm 1). For an
    exact EDM of points in ``dim`` dimensions the result equals the points up to
    a rigid motion (see :func:`procrustes_align`); for a noisy one it is the
    least-squares fit of the Gram matrix.

    Parameters
    ----------
    D : array_like, shape (n, n)
        Squared distances, possibly noisy.
    dim : int
        Embedding dimension, ``1 <= dim``; columns beyond the rank of ``G``
        come out as zeros.

    Returns
    -------
    numpy.ndarray, shape (n, dim)
        Centred points.

    Examples
    --------
    >>> X = classical_mds(edm([[0.0, 0.0], [3.0, 4.0]]), 2)
    >>> float(np.linalg.norm(X[0] - X[1]))
    5.0
    """
    owner = "classical_mds"
    arr = float_matrix(D, owner=owner, name="D", square=True)
    dim = check_dim(dim, owner=owner)
    n = arr.shape[0]
    G = _centred_gram((arr + arr.T) / 2)
    values, vectors = np.linalg.eigh(G)
    keep = min(dim, n)
    top = np.maximum(values[::-1][:keep], 0.0)
    points = np.zeros((n, dim))
    points[:, :keep] = vectors[:, ::-1][:, :keep] * np.sqrt(top)
    return points


def procrustes_align(X_est: Any, X_ref: Any, *, scale: bool = False
                     ) -> tuple[np.ndarray, dict[str, Any]]:
    """Map ``X_est`` onto ``X_ref`` by the best rotation/reflection and translation.

    Solves ``min ||s X_est R + t - X_ref||_F`` over orthogonal ``R``, vectors
    ``t`` and (with ``scale=True``) scalars ``s > 0``; ``s = 1`` otherwise.
    When the dimensions differ the smaller point set is padded with zero
    columns, so the aligned points have ``max(d_est, d_ref)`` columns.

    Parameters
    ----------
    X_est, X_ref : array_like, shapes (n, d_est) and (n, d_ref)
        Corresponding points as rows.
    scale : bool, default False
        Also fit a global scale.

    Returns
    -------
    aligned : numpy.ndarray, shape (n, max(d_est, d_ref))
        ``s X_est R + t``.
    transform : dict
        ``rotation`` (R), ``translation`` (t), ``scale`` (s) and
        ``residual`` (the Frobenius distance to the zero-padded ``X_ref``).

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    >>> moved = X @ np.array([[0.0, -1.0], [1.0, 0.0]]) + 5.0
    >>> aligned, transform = procrustes_align(moved, X)
    >>> bool(np.allclose(aligned, X)), round(transform["residual"], 12)
    (True, 0.0)
    """
    owner = "procrustes_align"
    est = float_matrix(X_est, owner=owner, name="X_est")
    ref = float_matrix(X_ref, owner=owner, name="X_ref")
    if est.shape[0] != ref.shape[0]:
        raise param_error(owner, "X_est", f"an array with {ref.shape[0]} rows like 'X_ref'",
                          described(f"an array of shape {est.shape}"))
    width = max(est.shape[1], ref.shape[1])
    est = np.pad(est, ((0, 0), (0, width - est.shape[1])))
    ref = np.pad(ref, ((0, 0), (0, width - ref.shape[1])))
    mean_est, mean_ref = est.mean(axis=0), ref.mean(axis=0)
    est0, ref0 = est - mean_est, ref - mean_ref
    U, singular, Vt = np.linalg.svd(est0.T @ ref0)
    rotation = U @ Vt
    factor = 1.0
    if scale:
        norm = float(np.sum(est0 * est0))
        factor = float(singular.sum() / norm) if norm > 0 else 1.0
    translation = mean_ref - factor * mean_est @ rotation
    aligned = factor * est @ rotation + translation
    transform = {
        "rotation": rotation,
        "translation": translation,
        "scale": factor,
        "residual": float(np.linalg.norm(aligned - ref)),
    }
    return aligned, transform


def nystrom_completion(D_XW: Any, D_W: Any, dim: int | None = None) -> np.ndarray:
    """The hidden block ``D_X`` from landmark distances, in closed form.

    With the landmarks centred at their mean ``c``, ``G_W = -1/2 J D_W J`` is
    their Gram matrix and the cross Gram ``G_XW[i, j] = (x_i - c)·(w_j - c)``
    follows from ``D_XW`` (the norm ``||x_i - c||^2`` is the row mean of
    ``D_XW`` minus the mean landmark norm). Then ``G_X = G_XW G_W^+ G_XW^T`` and
    ``D_X[i, k] = G_X[i, i] + G_X[k, k] - 2 G_X[i, k]``.

    ``G_X`` is the Gram matrix of the points projected orthogonally onto the
    affine hull of the landmarks, so the result is always an EDM (symmetric,
    nonnegative, zero diagonal), never larger than the truth entry-wise in
    exact arithmetic. It is **exact when the landmarks affinely span the
    points' space** -- m >= d + 1 landmarks in general position in
    ``R^d`` (exact data). With m <= d it returns the distances of the
    projections: a lower bound, not ``D_X``. (The literal Schur complement
    ``D_XW D_W^+ D_XW^T`` of the EDM itself is also exact, but needs
    m >= d + 2 because an EDM has rank d + 2.)

    Parameters
    ----------
    D_XW : array_like, shape (n, m)
        Squared distances from the n points to the m landmarks (all known).
    D_W : array_like, shape (m, m)
        Squared distances among the landmarks.
    dim : int, optional
        Keep only the ``dim`` largest eigenvalues of ``G_W`` (denoising for
        noisy distances); all eigenvalues above the rounding level otherwise.

    Returns
    -------
    numpy.ndarray, shape (n, n)
        The estimate of ``D_X``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, W = rng.random((5, 2)), rng.random((4, 2))
    >>> D_X = nystrom_completion(squared_distances(X, W), edm(W))
    >>> bool(np.allclose(D_X, edm(X)))
    True
    """
    owner = "nystrom_completion"
    cross = float_matrix(D_XW, owner=owner, name="D_XW")
    land = float_matrix(D_W, owner=owner, name="D_W", square=True)
    m = cross.shape[1]
    if land.shape[0] != m:
        raise param_error(owner, "D_W", f"an array of shape ({m}, {m}) to match 'D_XW'",
                          described(f"an array of shape {land.shape}"))
    if m < 1:
        raise param_error(owner, "D_XW", "an array with at least 1 landmark column",
                          described(f"an array of shape {cross.shape}"))
    G_W = _centred_gram((land + land.T) / 2)
    norms_W = np.diag(G_W)
    norms_X = cross.mean(axis=1) - norms_W.mean()
    G_XW = -0.5 * (cross - norms_X[:, None] - norms_W[None, :])
    values, vectors = np.linalg.eigh(G_W)
    floor = max(float(np.abs(values).max()), 1e-300) * m * np.finfo(float).eps * 10
    keep = values > floor
    if dim is not None:
        dim = check_dim(dim, owner=owner)
        keep &= np.arange(m) >= m - dim
    V = vectors[:, keep] / np.sqrt(values[keep])
    F = G_XW @ V  # coordinates of the projected points in the landmarks' principal axes
    G_X = F @ F.T
    g = np.diag(G_X)
    out = g[:, None] + g[None, :] - 2.0 * G_X
    out = (out + out.T) / 2
    np.fill_diagonal(out, 0.0)
    return np.maximum(out, 0.0)


def assemble_edm(D_X: Any, D_XW: Any, D_W: Any) -> tuple[np.ndarray, np.ndarray]:
    """Build ``D = [[D_X, D_XW], [D_XW^T, D_W]]`` and its mask of known entries.

    Parameters
    ----------
    D_X : array_like, shape (n, n), or None
        The private block; None when hidden (the attack's usual case).
    D_XW : array_like, shape (n, m)
        Point-to-landmark squared distances. NaN marks a missing entry (for
        example a kernel value that underflowed and cannot be inverted).
    D_W : array_like, shape (m, m), or None
        Landmark squared distances; None when unknown.

    Returns
    -------
    D : numpy.ndarray, shape (n + m, n + m)
        The assembled matrix, NaN where unknown, zero on the diagonal.
    mask : numpy.ndarray of bool, shape (n + m, n + m)
        True where an entry is known (the diagonal counts as known).

    Examples
    --------
    >>> D, mask = assemble_edm(None, [[1.0, np.nan]], [[0.0, 4.0], [4.0, 0.0]])
    >>> mask.astype(int)
    array([[1, 1, 0],
           [1, 1, 1],
           [0, 1, 1]])
    """
    owner = "assemble_edm"
    cross = float_matrix(D_XW, owner=owner, name="D_XW", allow_nan=True)
    n, m = cross.shape
    blocks = {}
    for name, value, size in (("D_X", D_X, n), ("D_W", D_W, m)):
        if value is None:
            blocks[name] = np.full((size, size), np.nan)
            continue
        block = float_matrix(value, owner=owner, name=name, square=True, allow_nan=True)
        if block.shape != (size, size):
            raise param_error(owner, name, f"an array of shape ({size}, {size}) to match 'D_XW'",
                              described(f"an array of shape {block.shape}"))
        blocks[name] = block
    D = np.block([[blocks["D_X"], cross], [cross.T, blocks["D_W"]]])
    np.fill_diagonal(D, 0.0)
    mask = ~np.isnan(D)
    mask &= mask.T
    D[~mask] = np.nan
    return D, mask
