"""The worker side of NRI-DC as pure functions: anchor, secret map, shared messages, epsilon-DR.

Imakura et al., "Non-readily identifiable data collaboration analysis for
multiple datasets including personal information", Information Fusion 98
(2023), as reviewed by Nosaka and Yoshise (arXiv:2403.02780), section 2.
Worker ``i`` fits PCA on ``X_i + sigma E_i`` (``E_i`` random) and uses its
first ``m_tilde`` components as a linear map ``F_i`` (``m x m_tilde``, no
centring: ``f_i(x) = x F_i``); it shares ``P_i X_i F_i``, ``X_anc F_i`` and
``P_i y_i`` with a random row permutation ``P_i`` and erases ``F_i``: in
:func:`share` the map never leaves the function.

epsilon-DR privacy (Nguyen et al. 2020; for DC, Imakura et al. 2021,
arXiv:2101.11144): a linear reduction ``F`` satisfies it on a sample set when
every sample's pseudoinverse reconstruction error ``||x - x F F^+||`` is at
least ``epsilon``; the down-sampling defence drops the samples that violate it
before sharing. The paper's equation (3) is not in our copy of the text; we use
the absolute Euclidean error, in the units of the (scaled) features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.errors import ValidationError
from fedsec.scoring.epsilon_dr import dr_certificate

ANCHOR_KINDS = ("normal", "uniform", "public")
NOISE_KINDS = ("normal", "uniform")


def reduced_dimension(n_features: int, n_components: int = 0) -> int:
    """``m_tilde``: ``n_components``, or ``floor(3 m / 4)`` (at least 1) when it is 0.

    The paper's formula is not in our copy of the text; ``floor(3 m / 4)``
    reproduces its one stated value (6 for Pima's 8 features).

    Examples
    --------
    >>> reduced_dimension(8), reduced_dimension(13), reduced_dimension(8, 8)
    (6, 9, 8)
    """
    if n_components == 0:
        return max(1, (3 * n_features) // 4)
    if not 1 <= n_components <= n_features:
        raise ValidationError(
            f"The 'n_components' parameter of protocol 'nri-dc' must be in [1, {n_features}] "
            f"(the number of features) or 0. Got {n_components} instead."
        )
    return n_components


def make_anchor(kind: str, n_anchor: int, n_features: int, rng: np.random.Generator,
                public: np.ndarray | None = None) -> np.ndarray:
    """The shared anchor ``X_anc`` (``n_anchor x n_features``).

    ``normal``: standard normal entries (the paper's choice); ``uniform``:
    U[0, 1) entries (suits min-max scaled data); ``public``: rows drawn with
    replacement from ``public`` (a public table with the same features),
    each column standardised by its own mean and deviation.

    Examples
    --------
    >>> make_anchor("uniform", 3, 2, np.random.default_rng(0)).shape
    (3, 2)
    """
    if kind == "normal":
        return rng.standard_normal((n_anchor, n_features))
    if kind == "uniform":
        return rng.random((n_anchor, n_features))
    if kind == "public":
        if public is None or np.ndim(public) != 2 or np.shape(public)[1] != n_features:
            raise ValidationError(
                f"A public anchor needs a table with {n_features} feature columns; got "
                f"{None if public is None else np.shape(public)}."
            )
        table = np.asarray(public, dtype=np.float64)
        std = table.std(axis=0)
        table = (table - table.mean(axis=0)) / np.where(std > 0, std, 1.0)
        return table[rng.integers(0, table.shape[0], size=n_anchor)]
    raise ValidationError(f"Unknown anchor kind {kind!r}; use one of {ANCHOR_KINDS}.")


def perturbed_pca_map(X: np.ndarray, n_components: int, *, sigma: float,
                      rng: np.random.Generator, noise: str = "normal") -> np.ndarray:
    """``F``: the first ``n_components`` principal axes of ``X + sigma E`` (``m x n_components``).

    Columns are orthonormal; signs follow scikit-learn's convention (largest
    absolute entry positive). With fewer rows than components the remaining
    axes complete an orthonormal basis.

    Examples
    --------
    >>> F = perturbed_pca_map(np.eye(4)[:3] * [3, 2, 1, 0], 2, sigma=0.0,
    ...                       rng=np.random.default_rng(0))
    >>> bool(np.allclose(F.T @ F, np.eye(2)))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    E = rng.standard_normal(X.shape) if noise == "normal" else rng.random(X.shape)
    Y = X + sigma * E
    _, _, Vt = np.linalg.svd(Y - Y.mean(axis=0), full_matrices=True)
    axes = Vt[:n_components]
    flip = np.sign(axes[np.arange(n_components), np.argmax(np.abs(axes), axis=1)])
    return (axes * np.where(flip == 0, 1.0, flip)[:, None]).T


def dr_errors(X: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Each sample's pseudoinverse reconstruction error ``||x - x F F^+||``.

    Examples
    --------
    >>> dr_errors(np.array([[3.0, 4.0]]), np.array([[1.0], [0.0]])).tolist()
    [4.0]
    """
    X = np.asarray(X, dtype=np.float64)
    return np.linalg.norm(X - X @ F @ np.linalg.pinv(F), axis=1)


@dataclass(frozen=True)
class Shared:
    """What one worker sends, and what it keeps to itself.

    ``intermediate`` (``P X F``), ``anchor`` (``X_anc F``) and ``labels``
    (``P y``) go to the master. ``rows`` is the worker's secret: the shard row
    behind each shared row (the permutation, minus dropped samples).
    ``certificate`` is the worker's own epsilon-DR check, before down-sampling,
    with ``n_dropped`` and the margin after it.
    """

    intermediate: np.ndarray
    anchor: np.ndarray
    labels: np.ndarray
    rows: np.ndarray
    certificate: dict[str, Any]


def share(X: np.ndarray, y: np.ndarray, anchor: np.ndarray, n_components: int, *, sigma: float,
          rng: np.random.Generator, noise: str = "normal", dr_epsilon: float = 0.0,
          downsample: bool = False) -> Shared:
    """One worker's step: secret map, epsilon-DR check (and down-sampling), permutation.

    Draws, in order: the perturbation ``E``, then the permutation. The map
    ``F`` is a local variable: only its images leave this function.
    """
    X = np.asarray(X, dtype=np.float64)
    F = perturbed_pca_map(X, n_components, sigma=sigma, rng=rng, noise=noise)
    errors = dr_errors(X, F)
    certificate = dr_certificate(errors, dr_epsilon)
    keep = np.ones(X.shape[0], dtype=bool)
    if downsample:
        keep = errors >= dr_epsilon
    after = dr_certificate(errors[keep], dr_epsilon)
    certificate.update(n_dropped=int((~keep).sum()), passed_after=after["passed"],
                       margin_after=after["margin"])
    order = rng.permutation(X.shape[0])
    rows = order[keep[order]]
    return Shared(intermediate=X[rows] @ F, anchor=np.asarray(anchor) @ F,
                  labels=np.asarray(y)[rows], rows=rows.astype(np.int64),
                  certificate=certificate)
