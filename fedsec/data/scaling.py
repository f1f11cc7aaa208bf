"""Per-column feature scaling fitted on training rows only.

Protocols reuse :func:`fit_scaler` when each party scales its own shard, and
:meth:`fedsec.data.Split.scaled` uses it for a centralised train/test split.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from fedsec.errors import DataError
from fedsec.validation import check_choice, check_finite, param_error

ScalingMethod = Literal["minmax", "standard", "none"]
SCALING_METHODS: tuple[str, ...] = get_args(ScalingMethod)


@dataclass(frozen=True, kw_only=True, eq=False)
class Scaler:
    """A fitted per-column affine map ``x -> (x - offset_) / scale_``.

    Build one with :func:`fit_scaler`.

    Parameters
    ----------
    method : {"minmax", "standard", "none"}
        How the parameters were fitted.
    offset_ : numpy.ndarray
        Per-column value subtracted first (read-only).
    scale_ : numpy.ndarray
        Per-column positive divisor (read-only); 1 for constant columns.

    Examples
    --------
    >>> scaler = fit_scaler(np.array([[0.0, 5.0], [2.0, 5.0]]), "minmax")
    >>> scaler.transform(np.array([[1.0, 5.0]])).tolist()
    [[0.5, 0.0]]
    """

    method: ScalingMethod
    offset_: np.ndarray
    scale_: np.ndarray

    def __post_init__(self) -> None:
        check_choice(self.method, owner="Scaler", name="method", choices=SCALING_METHODS)
        offset = np.array(self.offset_, dtype=np.float64)
        scale = np.array(self.scale_, dtype=np.float64)
        if offset.ndim != 1 or scale.shape != offset.shape:
            raise param_error("Scaler", "scale_", f"of shape {offset.shape}", scale.shape)
        if not (np.isfinite(offset).all() and np.isfinite(scale).all() and (scale > 0).all()):
            raise param_error("Scaler", "scale_", "finite and positive", scale)
        offset.setflags(write=False)
        scale.setflags(write=False)
        object.__setattr__(self, "offset_", offset)
        object.__setattr__(self, "scale_", scale)

    @property
    def n_features(self) -> int:
        """Number of columns the scaler was fitted on."""
        return int(self.offset_.size)

    def transform(self, X: Any) -> np.ndarray:
        """Scale the columns of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        numpy.ndarray
            A new float64 array.

        Examples
        --------
        >>> fit_scaler(np.array([[1.0], [3.0]]), "standard").transform([[3.0]]).tolist()
        [[1.0]]
        """
        arr = self._check(X, "transform")
        return (arr - self.offset_) / self.scale_

    def inverse_transform(self, X: Any) -> np.ndarray:
        """Map scaled values back to the original units.

        Examples
        --------
        >>> scaler = fit_scaler(np.array([[1.0], [3.0]]), "minmax")
        >>> scaler.inverse_transform([[0.5]]).tolist()
        [[2.0]]
        """
        arr = self._check(X, "inverse_transform")
        return arr * self.scale_ + self.offset_

    def _check(self, X: Any, verb: str) -> np.ndarray:
        arr = np.asarray(X, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.n_features:
            raise DataError(
                f"The 'X' parameter of Scaler.{verb} must have shape (n, {self.n_features}). "
                f"Got shape {arr.shape} instead."
            )
        return arr


def fit_scaler(X: Any, method: ScalingMethod) -> Scaler:
    """Fit a per-column scaler on the rows of ``X``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training rows only; finite values, at least one row.
    method : {"minmax", "standard", "none"}
        ``"minmax"`` maps each training column onto ``[0, 1]`` exactly (minimum to
        0, maximum to 1); ``"standard"`` gives zero mean and unit variance
        (population standard deviation); ``"none"`` is the identity. A constant
        column gets scale 1 and is mapped to 0 by both fitted methods. Under
        ``"standard"``, a column whose range is subnormal gets offset its minimum
        and scale 1 (its mean cannot be represented, so it could not be centred).

    Returns
    -------
    Scaler

    Raises
    ------
    fedsec.errors.DataError
        If ``X`` is not a non-empty two-dimensional finite array.

    Examples
    --------
    >>> scaler = fit_scaler(np.array([[1.0, 10.0], [3.0, 30.0]]), "minmax")
    >>> scaler.transform(np.array([[2.0, 30.0]])).tolist()
    [[0.5, 1.0]]
    """
    check_choice(method, owner="fit_scaler", name="method", choices=SCALING_METHODS)
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise DataError(
            "The 'X' parameter of fit_scaler must be a two-dimensional array with at least "
            f"one row. Got shape {arr.shape} instead."
        )
    check_finite(arr, what="the rows given to fit_scaler")
    n_features = arr.shape[1]
    if method == "none":
        return Scaler(method="none", offset_=np.zeros(n_features), scale_=np.ones(n_features))
    low, high = arr.min(axis=0), arr.max(axis=0)
    constant = high == low
    if method == "minmax":
        offset, scale = low, high - low
    else:
        # a subnormal range has no representable mean: centring would not centre it
        constant |= (high - low) < np.finfo(np.float64).tiny
        offset = arr.mean(axis=0)
        offset[constant] = low[constant]
        centred = arr - offset
        # The standard deviation of columns rescaled by their largest deviation, so that
        # squaring tiny values cannot underflow to subnormals and lose precision.
        span = np.abs(centred).max(axis=0)
        safe = np.where(span > 0, span, 1.0)
        scale = np.sqrt(np.mean((centred / safe) ** 2, axis=0)) * safe
    scale[constant | (scale == 0)] = 1.0
    if not np.isfinite(scale).all():
        raise DataError(
            "fit_scaler cannot scale columns whose range overflows float64 "
            f"(column {int(np.flatnonzero(~np.isfinite(scale))[0])})."
        )
    return Scaler(method=method, offset_=offset, scale_=scale)
