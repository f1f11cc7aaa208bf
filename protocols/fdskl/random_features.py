"""Random Fourier features, the losses of doubly stochastic kernel learning, one DSG step.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data" (section 2.2), after Rahimi and Recht (2008) and
Dai et al. (2014). A shift-invariant kernel is an expectation over random
features ``phi_w(x) = sqrt(2) cos(w^T x + b)``: ``w ~ N(0, sigma^-2 I)`` for
the RBF kernel ``exp(-||x - x'||^2 / (2 sigma^2))``, ``w`` with independent
Cauchy(0, 1/sigma) coordinates for the Laplace kernel ``exp(-||x - x'||_1 /
sigma)``, and ``b ~ U[0, 2 pi]``. DSG with a constant step ``gamma`` picks a
sample ``x_t`` and a fresh feature ``w_t`` per iteration, sets ``alpha_t =
-gamma L'(f(x_t), y_t) phi_t(x_t)`` and scales every earlier coefficient by
``1 - gamma lambda`` (eq. 7 with ``gamma_t = gamma``; the step itself, with
mini-batches, is :mod:`fedsec.protocols.fdskl.batches`).

Every party regenerates direction ``w_j`` from the shared seed and the
feature index alone (directions are drawn in blocks of :data:`BLOCK`
features, one generator per block), so nobody sends a direction. Pure
functions on arrays; the protocols decide who computes what.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fedsec.errors import ValidationError
from fedsec.seeding import keyed_generator

KERNELS = ("rbf", "laplace")
LOSSES = ("square", "logistic", "smooth-hinge")
BLOCK = 256
"""Features drawn per generator: feature ``j`` is row ``j % BLOCK`` of block ``j // BLOCK``."""
TWO_PI = 2.0 * np.pi
SQRT2 = np.sqrt(2.0)


def draw_directions(material: bytes, block: int, n_features: int, *, kernel: str,
                    width: float) -> np.ndarray:
    """The ``BLOCK`` directions of one block (``BLOCK × n_features``), from the shared seed.

    Examples
    --------
    >>> a = draw_directions(b"k" * 32, 0, 3, kernel="rbf", width=1.0)
    >>> a.shape, bool((a == draw_directions(b"k" * 32, 0, 3, kernel="rbf", width=1.0)).all())
    ((256, 3), True)
    """
    rng = keyed_generator(material, block)
    if kernel == "rbf":
        return rng.normal(0.0, 1.0 / width, size=(BLOCK, n_features))
    if kernel == "laplace":
        return rng.standard_cauchy(size=(BLOCK, n_features)) / width
    raise ValidationError(f"Unknown kernel {kernel!r}; expected one of {KERNELS}.")


def draw_phases(material: bytes, block: int) -> np.ndarray:
    """The ``BLOCK`` phases ``b_j ~ U[0, 2 pi]`` of one block, from a phase stream."""
    rng = keyed_generator(material, block)
    return rng.uniform(0.0, TWO_PI, size=BLOCK)


class FeatureBank:
    """Directions (and optionally phases) regenerated on demand and kept, block by block.

    One bank per holder of the seed: a worker keeps only what it draws.

    Examples
    --------
    >>> bank = FeatureBank(b"k" * 32, 4, kernel="rbf", width=2.0)
    >>> bank.directions(0, 300).shape
    (300, 4)
    """

    def __init__(self, material: bytes, n_features: int, *, kernel: str, width: float,
                 phase_material: bytes | None = None) -> None:
        self.material = material
        self.phase_material = phase_material
        self.n_features = n_features
        self.kernel = kernel
        self.width = width
        self._W = np.empty((0, n_features))
        self._b = np.empty(0)

    def _extend(self, stop: int) -> None:
        have = self._W.shape[0]
        if stop <= have:
            return
        blocks = range(have // BLOCK, -(-stop // BLOCK))
        new = [draw_directions(self.material, k, self.n_features, kernel=self.kernel,
                               width=self.width) for k in blocks]
        self._W = np.vstack([self._W, *new])
        if self.phase_material is not None:
            self._b = np.concatenate([self._b,
                                      *(draw_phases(self.phase_material, k) for k in blocks)])

    def directions(self, start: int, stop: int) -> np.ndarray:
        """Directions ``w_start .. w_{stop-1}`` (rows)."""
        self._extend(stop)
        return self._W[start:stop]

    def phases(self, start: int, stop: int) -> np.ndarray:
        """Phases ``b_start .. b_{stop-1}`` (needs the phase stream)."""
        if self.phase_material is None:
            raise ValidationError("This feature bank holds no phase stream.")
        self._extend(stop)
        return self._b[start:stop]


def feature_map(Z: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """``sqrt(2) cos(Z)``: random features from their arguments ``w^T x + b`` (into ``out``
    when given, which may be ``Z`` itself)."""
    out = np.cos(Z, out=out)
    out *= SQRT2
    return out


def exact_kernel(X: np.ndarray, Y: np.ndarray, *, kernel: str, width: float) -> np.ndarray:
    """The kernel the random features approximate (RBF or Laplace), n×m.

    Examples
    --------
    >>> float(exact_kernel(np.zeros((1, 1)), np.ones((1, 1)), kernel="laplace", width=1.0)[0, 0])
    0.36787944117144233
    """
    if kernel == "rbf":
        sq = (X**2).sum(1)[:, None] + (Y**2).sum(1)[None, :] - 2.0 * X @ Y.T
        return np.exp(-np.maximum(sq, 0.0) / (2.0 * width**2))
    if kernel == "laplace":
        return np.exp(-np.abs(X[:, None, :] - Y[None, :, :]).sum(-1) / width)
    raise ValidationError(f"Unknown kernel {kernel!r}; expected one of {KERNELS}.")


def scale_width(total: float, squares: float, count: int, n_features: int, *,
                kernel: str = "rbf") -> float:
    """A width from pooled sums, like scikit-learn's ``gamma="scale"``.

    RBF: ``sigma^2 = n_features Var(X) / 2`` (``gamma = 1 / (n_features Var(X))``).
    Laplace: ``sigma = n_features * 2 sqrt(Var(X) / pi)``, the mean L1 distance
    between two points for Gaussian-like columns. ``Var(X)`` is the variance of
    every entry.
    """
    var = squares / count - (total / count) ** 2
    if not var > 0:
        return 1.0
    if kernel == "laplace":
        return float(n_features * 2.0 * np.sqrt(var / np.pi))
    return float(np.sqrt(n_features * var / 2.0))


def loss_derivative(loss: str) -> Callable[[float, float], float]:
    """``L'(u, y)`` with respect to the prediction ``u`` (Table 1 of the paper).

    Examples
    --------
    >>> loss_derivative("smooth-hinge")(0.5, 1.0)
    -0.5
    """
    if loss == "square":
        return lambda u, y: 2.0 * (u - y)
    if loss == "logistic":
        def logistic(u: float, y: float) -> float:
            z = y * u
            return -y / (1.0 + np.exp(z)) if z > -30 else -y
        return logistic
    if loss == "smooth-hinge":
        def hinge(u: float, y: float) -> float:
            z = y * u
            return -y if z <= 0 else (-y * (1.0 - z) if z < 1 else 0.0)
        return hinge
    raise ValidationError(f"Unknown loss {loss!r}; expected one of {LOSSES}.")


def loss_value(loss: str, u: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``L(u, y)`` element-wise (Table 1)."""
    if loss == "square":
        return (u - y) ** 2
    z = y * u
    if loss == "logistic":
        return np.logaddexp(0.0, -z)
    return np.where(z <= 0, 0.5 - z, np.where(z < 1, 0.5 * (1 - z) ** 2, 0.0))


def predict(X: np.ndarray, bank: FeatureBank, alpha: np.ndarray, *,
            chunk: int = 2048) -> np.ndarray:
    """``f(x) = sum_j alpha_j phi_j(x)`` for every row of ``X`` (the evaluator's computation)."""
    return feature_scores(X, bank.directions(0, alpha.size), bank.phases(0, alpha.size), alpha,
                          chunk=chunk)


def feature_scores(X: np.ndarray, directions: np.ndarray, phases: np.ndarray, alpha: np.ndarray,
                   *, chunk: int = 2048) -> np.ndarray:
    """``f(x) = sum_j alpha_j sqrt(2) cos(w_j^T x + b_j)``, ``chunk`` features at a time.

    Examples
    --------
    >>> feature_scores(np.zeros((1, 1)), np.ones((1, 1)), np.zeros(1), np.array([0.5])).round(4)
    array([0.7071])
    """
    out = np.zeros(X.shape[0])
    for start in range(0, alpha.size, chunk):
        stop = min(start + chunk, alpha.size)
        Z = X @ directions[start:stop].T
        Z += phases[start:stop]  # in place, as the features below: one array at a time
        out += feature_map(Z, out=Z) @ alpha[start:stop]
        del Z
    return out
