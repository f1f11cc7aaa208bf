"""Checks and conversions of :class:`~fedsec.data.Dataset` fields.

Each function takes a raw field value and returns it in its stored form
(read-only arrays, tuples) or raises with the standard parameter message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from fedsec.errors import DataError, ValidationError
from fedsec.validation import check_int, param_error


def readonly(array: Any, dtype: type | np.dtype) -> np.ndarray:
    """Return ``array`` as a read-only C-ordered array of ``dtype``.

    An array that is already read-only with the right dtype and layout is
    shared, anything else is copied so later writes to the input cannot reach it.

    Examples
    --------
    >>> a = readonly([1, 2, 3], np.float64)
    >>> a.flags.writeable
    False
    """
    arr = np.asarray(array)
    if arr.dtype == dtype and not arr.flags.writeable and arr.flags.c_contiguous:
        return arr
    out = np.array(arr, dtype=dtype, order="C", copy=True)
    out.setflags(write=False)
    return out


def as_feature_matrix(X: Any, owner: str) -> np.ndarray:
    """``X`` as a read-only float64 matrix with at least one column."""
    arr = np.asarray(X)
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise DataError(
            f"The 'X' parameter of {owner} must be a two-dimensional array with at least "
            f"one column. Got an array of shape {arr.shape} instead."
        )
    if arr.dtype.kind not in "biuf":
        raise DataError(
            f"The 'X' parameter of {owner} must hold real numbers. Got dtype {arr.dtype} instead."
        )
    return readonly(arr, np.float64)


def as_feature_names(names: Any, n_features: int, owner: str) -> tuple[str, ...]:
    """One unique non-empty name per column; ``f1 .. fN`` when none are given."""
    if names is None or len(names) == 0:
        return tuple(f"f{j + 1}" for j in range(n_features))
    names = tuple(names)
    if len(names) != n_features or not all(isinstance(n, str) and n for n in names):
        raise param_error(owner, "feature_names", f"{n_features} non-empty strings", names)
    check_unique(names, owner, "feature_names")
    return names


def check_unique(names: tuple[str, ...], owner: str, parameter: str) -> None:
    """Refuse repeated names, listing them."""
    repeated = sorted(n for n, count in Counter(names).items() if count > 1)
    if repeated:
        raise ValidationError(
            f"The {parameter!r} parameter of {owner} must hold unique names. "
            f"Got repeated name(s) {', '.join(map(repr, repeated))} instead."
        )


def as_feature_groups(groups: Any, n_features: int, owner: str) -> dict[str, tuple[int, ...]]:
    """An ordered partition of the columns; ``{"all": every column}`` when none is given."""
    if groups is None or len(groups) == 0:
        return {"all": tuple(range(n_features))}
    if not isinstance(groups, Mapping):
        raise param_error(owner, "feature_groups", "a mapping of name to column indices", groups)
    out: dict[str, tuple[int, ...]] = {}
    seen = np.zeros(n_features, dtype=np.int64)
    for name, columns in groups.items():
        if not isinstance(name, str) or not name:
            raise param_error(owner, "feature_groups", "keyed by non-empty strings", name)
        cols = tuple(
            check_int(c, owner=owner, name=f"feature_groups[{name!r}]", min_value=0,
                      max_value=n_features - 1)
            for c in columns
        )
        if not cols:
            raise param_error(owner, f"feature_groups[{name!r}]", "a non-empty tuple", cols)
        np.add.at(seen, list(cols), 1)
        out[name] = cols
    if (seen != 1).any():
        bad = int(np.flatnonzero(seen != 1)[0])
        raise ValidationError(
            f"The 'feature_groups' parameter of {owner} must cover every column exactly "
            f"once. Got column {bad} in {int(seen[bad])} group(s) instead."
        )
    return out


def as_labels(
    y: Any, task: str, class_names: Any, n_samples: int, owner: str,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Labels in stored form and the class names (filled in when empty)."""
    arr = np.asarray(y)
    if arr.shape != (n_samples,):
        raise DataError(
            f"The 'y' parameter of {owner} must be one-dimensional with one label per row of "
            f"X ({n_samples}). Got an array of shape {arr.shape} instead."
        )
    if arr.dtype.kind not in "biuf":
        raise DataError(
            f"The 'y' parameter of {owner} must hold numbers (class codes or targets). "
            f"Got dtype {arr.dtype} instead; encode labels as codes and pass class_names."
        )
    if task == "regression":
        if class_names:
            raise param_error(owner, "class_names", "empty for a regression task", class_names)
        return readonly(arr, np.float64), ()
    if arr.dtype.kind == "f" and not np.array_equal(arr, np.round(arr)):
        raise DataError(f"The 'y' parameter of {owner} must hold integer class codes.")
    codes = readonly(arr, np.int64)
    if class_names is None or len(class_names) == 0:
        n_classes = int(codes.max()) + 1 if codes.size else 0
        n_classes = 2 if task == "binary" else max(n_classes, 3)
        names = tuple(str(k) for k in range(n_classes))
    else:
        names = tuple(str(c) for c in class_names)
    check_unique(names, owner, "class_names")
    expected = "exactly 2" if task == "binary" else "at least 3"
    if (task == "binary") != (len(names) == 2) or len(names) < 2:
        raise param_error(owner, "class_names", f"{expected} names for a {task} task", names)
    if codes.size and (codes.min() < 0 or codes.max() >= len(names)):
        raise DataError(
            f"The 'y' parameter of {owner} must hold class codes in [0, {len(names) - 1}]. "
            f"Got values from {int(codes.min())} to {int(codes.max())} instead."
        )
    return codes, names


def _index_array(values: Any, n_samples: int, owner: str, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise param_error(owner, name, "a one-dimensional array of row indices", values)
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n_samples):
        raise param_error(owner, name, f"row indices in [0, {n_samples - 1}]", values)
    return arr


def as_row_index(rows: Any, n_samples: int, owner: str) -> np.ndarray:
    """Row indices from an index array (repeats allowed) or a boolean mask."""
    arr = np.asarray(rows)
    if arr.dtype == bool:
        if arr.shape != (n_samples,):
            raise param_error(owner, "rows", f"a boolean mask of length {n_samples}", rows)
        return np.flatnonzero(arr)
    return _index_array(arr, n_samples, owner, "rows")


def as_test_rows(rows: Any, n_samples: int, owner: str) -> np.ndarray | None:
    """Distinct row indices, sorted and read-only, or ``None``."""
    if rows is None:
        return None
    arr = _index_array(rows, n_samples, owner, "test_rows")
    unique = np.unique(arr)
    if unique.size != arr.size:
        raise param_error(owner, "test_rows", "distinct row indices", rows)
    return readonly(unique, np.int64)


def as_cohorts(cohorts: Any, n_samples: int, owner: str) -> np.ndarray | None:
    """One non-negative int cohort code per row, read-only, or ``None``."""
    if cohorts is None:
        return None
    arr = np.asarray(cohorts)
    if arr.shape != (n_samples,) or (arr.size and arr.dtype.kind not in "iu"):
        raise param_error(owner, "cohorts", f"{n_samples} integer cohort codes", cohorts)
    if arr.size and arr.min() < 0:
        raise param_error(owner, "cohorts", "non-negative cohort codes", int(arr.min()))
    return readonly(arr, np.int64)
