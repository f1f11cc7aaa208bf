"""Input checks shared by the geometry functions, in the project's one message format.

Every refusal reads "The 'NAME' parameter of OWNER must be EXPECTED. Got VALUE
instead." (see :mod:`fedsec.validation`); array problems name the shape or the
first offending entry instead of printing the array.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from fedsec.convergence import Convergence, judge
from fedsec.errors import DataError
from fedsec.validation import check_float, check_int, param_error

Progress = Callable[[int, float], None]
Report = Callable[[Convergence], None]
"""Receives a completer's :class:`~fedsec.convergence.Convergence` record once, at the end."""


class _Described(str):
    """A description that prints without quotes inside ``param_error``."""

    def __repr__(self) -> str:
        return str(self)


def described(text: str) -> _Described:
    """Wrap ``text`` so the standard error message shows it verbatim."""
    return _Described(text)


def float_matrix(value: Any, *, owner: str, name: str, square: bool = False,
                 allow_nan: bool = False) -> np.ndarray:
    """Return ``value`` as a 2-D float array, refusing other shapes and NaN/inf.

    With ``allow_nan`` NaN entries (unknown values) pass, infinities still do not.
    """
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise param_error(owner, name, "a 2-D array of numbers",
                          described(f"a {type(value).__name__}")) from None
    expected = "a square 2-D array" if square else "a 2-D array"
    if arr.ndim != 2 or (square and arr.shape[0] != arr.shape[1]):
        raise param_error(owner, name, expected, described(f"an array of shape {arr.shape}"))
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        allowed = " (NaN marks an unknown entry)" if allow_nan else ""
        raise DataError(
            f"The {name!r} parameter of {owner} must have finite entries{allowed}. "
            f"Got {arr[i, j]} at row {i}, column {j} instead."
        )
    return arr


def check_dim(dim: Any, *, owner: str, n_points: int | None = None) -> int:
    """The embedding dimension: an int >= 1 (and < ``n_points`` when given)."""
    upper = None if n_points is None else max(n_points - 1, 1)
    return check_int(dim, owner=owner, name="dim", min_value=1, max_value=upper)


def check_rng(rng: Any, *, owner: str) -> np.random.Generator:
    """Refuse anything but a :class:`numpy.random.Generator`."""
    if not isinstance(rng, np.random.Generator):
        raise param_error(owner, "rng", "a numpy.random.Generator (np.random.default_rng(seed))",
                          rng)
    return rng


def check_progress(progress: Any, *, owner: str) -> Progress | None:
    """Refuse a progress argument that is neither None nor callable."""
    if progress is not None and not callable(progress):
        raise param_error(owner, "progress", "None or a callable (iteration, objective)",
                          progress)
    return progress


def check_report(on_convergence: Any, *, owner: str) -> Report | None:
    """Refuse an ``on_convergence`` argument that is neither None nor callable."""
    if on_convergence is not None and not callable(on_convergence):
        raise param_error(owner, "on_convergence", "None or a callable (Convergence record)",
                          on_convergence)
    return on_convergence


class Tracker:
    """A progress callback that keeps every objective it is given and passes it on.

    The completers give it the value they report as progress (one per iteration);
    :func:`fedsec.convergence.judge` reads the history it kept.

    Examples
    --------
    >>> seen = []
    >>> tracker = Tracker(lambda i, v: seen.append(i))
    >>> tracker(1, 3.0); tracker(2, 1.0)
    >>> tracker.history, seen
    ([3.0, 1.0], [1, 2])
    """

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.history: list[float] = []

    def __call__(self, iteration: int, value: float) -> None:
        self.history.append(float(value))
        if self.progress is not None:
            self.progress(iteration, value)


def tracked(progress: Progress | None, on_convergence: Report | None) -> Progress | None:
    """``progress`` wrapped in a :class:`Tracker` when a convergence record is wanted."""
    return progress if on_convergence is None else Tracker(progress)


def history_of(progress: Progress | None) -> list[float]:
    """The objective history a :func:`tracked` callback kept (empty for a plain one)."""
    return progress.history if isinstance(progress, Tracker) else []


def report(on_convergence: Report | None, progress: Progress | None, *, budget: int,
           floor: float, stopped_early: bool, stationary: bool = False) -> None:
    """Give ``on_convergence`` (when there is one) the verdict of
    :func:`~fedsec.convergence.judge` on the history a :func:`tracked` ``progress`` kept."""
    if on_convergence is not None:
        on_convergence(judge(history_of(progress), budget=budget, floor=floor,
                             stopped_early=stopped_early, stationary=stationary))


def check_loop(max_iter: Any, tol: Any, *, owner: str) -> tuple[int, float]:
    """The iteration budget (an int >= 1) and stopping tolerance (a float >= 0)."""
    return (check_int(max_iter, owner=owner, name="max_iter", min_value=1),
            check_float(tol, owner=owner, name="tol", min_value=0.0))


def completion_problem(D: Any, mask: Any, dim: Any, *, owner: str
                       ) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate an EDM completion problem.

    Returns
    -------
    values : numpy.ndarray
        ``D`` as floats with unknown entries and the diagonal set to 0.
    known : numpy.ndarray
        Boolean mask of known off-diagonal entries (the diagonal is always
        treated as a known zero and is False here).
    dim : int
        The validated embedding dimension.
    """
    values = float_matrix(D, owner=owner, name="D", square=True, allow_nan=True)
    n_points = values.shape[0]
    if n_points < 2:
        raise param_error(owner, "D", "a square array of at least 2 points",
                          described(f"an array of shape {values.shape}"))
    raw = np.asarray(mask)
    if raw.shape != values.shape:
        raise param_error(owner, "mask", f"an array of the shape of 'D' {values.shape}",
                          described(f"an array of shape {raw.shape}"))
    if raw.dtype != bool:
        if raw.dtype.kind not in "biuf" or not np.isin(raw, (0, 1)).all():
            raise param_error(owner, "mask", "a boolean (or 0/1) array",
                              described(f"an array of dtype {raw.dtype} with other values"))
        raw = raw.astype(bool)
    if not np.array_equal(raw, raw.T):
        i, j = (int(k) for k in np.argwhere(raw != raw.T)[0])
        raise param_error(owner, "mask", "symmetric (an entry and its mirror both known or both "
                          "unknown)", described(f"mask[{i}, {j}] != mask[{j}, {i}]"))
    known = raw.copy()
    np.fill_diagonal(known, False)
    unknown_nan = known & np.isnan(values)
    if unknown_nan.any():
        i, j = (int(k) for k in np.argwhere(unknown_nan)[0])
        raise DataError(
            f"The 'D' parameter of {owner} must be finite on the known entries (mask True). "
            f"Got nan at row {i}, column {j} instead."
        )
    values = np.where(known, values, 0.0)
    gap = np.abs(values - values.T)
    scale = max(float(np.max(np.abs(values))), 1e-300)
    if gap.max() > 1e-9 * scale:
        i, j = (int(k) for k in np.argwhere(gap == gap.max())[0])
        raise param_error(owner, "D", "symmetric on the known entries (use (D + D.T) / 2)",
                          described(f"D[{i}, {j}] = {values[i, j]} != D[{j}, {i}] = "
                                    f"{values[j, i]}"))
    values = (values + values.T) / 2
    return values, known, check_dim(dim, owner=owner, n_points=n_points)


class CompleterInputs(NamedTuple):
    """What every completer starts from, checked (see :func:`completer_inputs`)."""

    values: np.ndarray
    known: np.ndarray
    dim: int
    rng: np.random.Generator
    max_iter: int
    tol: float
    progress: Progress | None
    on_convergence: Report | None


def completer_inputs(D: Any, mask: Any, dim: Any, rng: Any, max_iter: Any, tol: Any,
                     progress: Any, on_convergence: Any, *, owner: str) -> CompleterInputs:
    """The completion problem (:func:`completion_problem`) and the loop's arguments, checked."""
    values, known, dim = completion_problem(D, mask, dim, owner=owner)
    return CompleterInputs(values, known, dim, check_rng(rng, owner=owner),
                           *check_loop(max_iter, tol, owner=owner),
                           check_progress(progress, owner=owner),
                           check_report(on_convergence, owner=owner))


def finish_edm(D: np.ndarray) -> np.ndarray:
    """Symmetrise, zero the diagonal and clip negative entries of an estimate."""
    out = (D + D.T) / 2
    np.fill_diagonal(out, 0.0)
    return np.maximum(out, 0.0)
