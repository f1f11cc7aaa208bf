"""Checks on what a partition is applied to: the dataset's shape, labels, sites, coordinators."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.errors import PartitionError, ValidationError
from fedsec.partition.names import duplicates, name_problem
from fedsec.validation import check_int, param_error

OWNER = "PartitionSpec.apply"


@dataclass(frozen=True, eq=False)
class DataShape:
    """The checked shape of a dataset: rows, named column groups, class codes, site ids."""

    n_samples: int
    groups: tuple[tuple[str, np.ndarray], ...]
    y: np.ndarray | None = None
    sites: np.ndarray | None = None

    @property
    def group_names(self) -> tuple[str, ...]:
        """The dataset's column group names, in order."""
        return tuple(name for name, _ in self.groups)

    @property
    def columns(self) -> np.ndarray:
        """Every column of the dataset, group after group."""
        return np.concatenate([columns for _, columns in self.groups])

    @property
    def n_features(self) -> int:
        """How many columns the groups hold together."""
        return sum(len(columns) for _, columns in self.groups)


def _fail(error: ValidationError) -> PartitionError:
    return PartitionError(str(error))


def check_groups(feature_groups: Any) -> tuple[tuple[str, np.ndarray], ...]:
    """Check named column groups: non-empty, integer, non-negative, no column twice.

    Examples
    --------
    >>> [(n, c.tolist()) for n, c in check_groups({"a": range(2), "b": [2]})]
    [('a', [0, 1]), ('b', [2])]
    """
    expected = "a non-empty mapping from group name to column indices"
    if not isinstance(feature_groups, Mapping) or not feature_groups:
        raise _fail(param_error(OWNER, "feature_groups", expected, feature_groups))
    groups = []
    owner_of: dict[int, str] = {}
    for name, columns in feature_groups.items():
        if not isinstance(name, str) or not name:
            raise PartitionError(f"Feature group name {name!r} must be a non-empty string.")
        array = np.asarray(list(columns))
        if array.size == 0:
            raise PartitionError(
                f"Feature group {name!r} has no columns. Drop it from feature_groups."
            )
        if array.ndim != 1 or array.dtype.kind not in "iu" or (array < 0).any():
            raise PartitionError(
                f"Feature group {name!r} must list non-negative integer column indices. "
                f"Got {list(columns)!r}."
            )
        for column in array.tolist():
            if column in owner_of:
                raise PartitionError(
                    f"Column {column} is in feature group {owner_of[column]!r} and in "
                    f"{name!r}. Each column must belong to exactly one group."
                )
            owner_of[column] = name
        groups.append((name, array.astype(np.intp)))
    return tuple(groups)


def _one_per_row(value: Any, n_samples: int, *, name: str, what: str) -> np.ndarray:
    """``value`` as a one-dimensional array of ``n_samples`` entries (``what``), or refused."""
    array = np.asarray(value)
    if array.ndim != 1 or len(array) != n_samples:
        raise PartitionError(
            f"{name} must be a one-dimensional array of {n_samples} {what}, one per row. "
            f"Got shape {array.shape}."
        )
    return array


def _check_labels(y: Any, n_samples: int) -> np.ndarray:
    array = _one_per_row(y, n_samples, name="y", what="class codes")
    if array.dtype.kind == "f" and not (
        np.isfinite(array).all() and (array == np.round(array)).all()
    ):
        raise PartitionError(
            "y must hold class codes (integers or strings) for a stratified split; it holds "
            "non-integer values. Pass y=None to split without stratification."
        )
    if array.dtype.kind not in "biufUS":
        raise PartitionError(f"y must hold class codes; got an array of dtype {array.dtype}.")
    return array


def _check_sites(cohorts: Any, n_samples: int) -> np.ndarray:
    array = _one_per_row(cohorts, n_samples, name="cohorts", what="site ids")
    if array.dtype.kind not in "biufUS" or (array.dtype.kind == "f" and np.isnan(array).any()):
        raise PartitionError(
            "cohorts must hold site ids (integers or strings) without missing values."
        )
    return array


def check_coordinators(coordinators: Any) -> tuple[tuple[str, str], ...]:
    """Check ``(name, role)`` pairs of data-less parties.

    Examples
    --------
    >>> check_coordinators([("server", "server")])
    (('server', 'server'),)
    """
    expected = "a sequence of (name, role) pairs of strings"
    if not isinstance(coordinators, Sequence) or isinstance(coordinators, str):
        raise _fail(param_error(OWNER, "coordinators", expected, coordinators))
    pairs = []
    for pair in coordinators:
        if not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2:
            raise _fail(param_error(OWNER, "coordinators", expected, coordinators))
        for value, what in ((pair[0], "coordinator name"), (pair[1], "coordinator role")):
            problem = name_problem(value, what=what)
            if problem:
                raise PartitionError(problem[0].upper() + problem[1:] + ".")
        pairs.append((pair[0], pair[1]))
    repeated = duplicates(name for name, _ in pairs)
    if repeated:
        raise PartitionError(
            "Coordinator names must be unique; repeated: " + ", ".join(map(repr, repeated)) + "."
        )
    return tuple(pairs)


def check_inputs(
    *,
    n_samples: Any,
    feature_groups: Any,
    y: Any,
    cohorts: Any,
    rng: Any,
) -> DataShape:
    """Check the arguments of :meth:`PartitionSpec.apply` and bundle them.

    Examples
    --------
    >>> shape = check_inputs(n_samples=4, feature_groups={"all": range(3)}, y=None,
    ...                      cohorts=None, rng=np.random.default_rng(0))
    >>> shape.n_samples, shape.n_features
    (4, 3)
    """
    try:
        n_samples = check_int(n_samples, owner=OWNER, name="n_samples", min_value=1)
    except ValidationError as error:
        raise _fail(error) from None
    if not isinstance(rng, np.random.Generator):
        raise _fail(param_error(OWNER, "rng", "a numpy.random.Generator", rng))
    return DataShape(
        n_samples=n_samples,
        groups=check_groups(feature_groups),
        y=None if y is None else _check_labels(y, n_samples),
        sites=None if cohorts is None else _check_sites(cohorts, n_samples),
    )
