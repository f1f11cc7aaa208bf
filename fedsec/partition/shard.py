"""The private data of one party: the slices of X (and y) its cells cover.

A :class:`Shard` flattens to plain named arrays (:meth:`Shard.arrays`) so it can
be saved with ``numpy.savez`` and read back with ``allow_pickle=False``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from fedsec.errors import DataError

_KEY = re.compile(r"^cell(\d+)/(cohort|group|rows|columns|X|y)$")
_REQUIRED = ("cohort", "group", "rows", "columns", "X")


class _CellLike(Protocol):
    @property
    def cohort(self) -> int: ...
    @property
    def group(self) -> int: ...
    @property
    def rows(self) -> np.ndarray: ...
    @property
    def columns(self) -> np.ndarray: ...


def _same_labels(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(a, b)


@dataclass(frozen=True, eq=False)
class ShardCell:
    """One cell of a party's data: ``X[rows][:, columns]`` and, if it holds them, ``y[rows]``.

    ``rows`` and ``columns`` index the dataset the partition was applied to.
    """

    cohort: int
    group: int
    rows: np.ndarray
    columns: np.ndarray
    X: np.ndarray
    y: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.X.shape[:2] != (len(self.rows), len(self.columns)):
            raise DataError(
                f"Cell ({self.cohort}, {self.group}) has X of shape {self.X.shape} but "
                f"{len(self.rows)} rows and {len(self.columns)} columns."
            )
        if self.y is not None and len(self.y) != len(self.rows):
            raise DataError(
                f"Cell ({self.cohort}, {self.group}) has {len(self.y)} labels for "
                f"{len(self.rows)} rows."
            )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShardCell):
            return NotImplemented
        return (
            (self.cohort, self.group) == (other.cohort, other.group)
            and all(
                np.array_equal(a, b)
                for a, b in (
                    (self.rows, other.rows),
                    (self.columns, other.columns),
                    (self.X, other.X),
                )
            )
            and _same_labels(self.y, other.y)
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class Shard:
    """The private data of one party, cell by cell.

    Examples
    --------
    >>> cell = ShardCell(0, 0, np.array([0, 1]), np.array([2]), np.ones((2, 1)), None)
    >>> shard = Shard("alice", (cell,))
    >>> shard.X.shape, shard.n_rows
    ((2, 1), 2)
    """

    party: str
    cells: tuple[ShardCell, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "cells", tuple(self.cells))

    def _single(self) -> ShardCell:
        if len(self.cells) != 1:
            raise DataError(
                f"Party {self.party!r} holds {len(self.cells)} cells, so its data is not one "
                "matrix. Iterate over shard.cells instead of using shard.X or shard.y."
            )
        return self.cells[0]

    @property
    def X(self) -> np.ndarray:
        """The party's data matrix when it holds exactly one cell."""
        return self._single().X

    @property
    def y(self) -> np.ndarray | None:
        """The party's labels when it holds exactly one cell (``None`` if it holds none)."""
        return self._single().y

    @property
    def rows(self) -> np.ndarray:
        """The distinct dataset rows the party holds, sorted."""
        if not self.cells:
            return np.empty(0, dtype=np.intp)
        return np.unique(np.concatenate([cell.rows for cell in self.cells]))

    @property
    def n_rows(self) -> int:
        """How many distinct dataset rows the party holds."""
        return len(self.rows)

    def arrays(self) -> dict[str, np.ndarray]:
        """Flatten to named arrays ``cell0/X``, ``cell0/rows``, ... for saving.

        Examples
        --------
        >>> cell = ShardCell(0, 1, np.array([3]), np.array([0, 1]), np.zeros((1, 2)))
        >>> sorted(Shard("bob", (cell,)).arrays())
        ['cell0/X', 'cell0/cohort', 'cell0/columns', 'cell0/group', 'cell0/rows']
        """
        out: dict[str, np.ndarray] = {}
        for i, cell in enumerate(self.cells):
            out[f"cell{i}/cohort"] = np.asarray(cell.cohort, dtype=np.int64)
            out[f"cell{i}/group"] = np.asarray(cell.group, dtype=np.int64)
            out[f"cell{i}/rows"] = np.asarray(cell.rows, dtype=np.int64)
            out[f"cell{i}/columns"] = np.asarray(cell.columns, dtype=np.int64)
            out[f"cell{i}/X"] = cell.X
            if cell.y is not None:
                out[f"cell{i}/y"] = cell.y
        return out

    @classmethod
    def from_arrays(cls, party: str, arrays: Mapping[str, Any]) -> Shard:
        """Rebuild a shard from :meth:`arrays` output (for example an ``NpzFile``).

        Examples
        --------
        >>> cell = ShardCell(0, 0, np.array([1]), np.array([0]), np.ones((1, 1)), np.array([1]))
        >>> shard = Shard("alice", (cell,))
        >>> Shard.from_arrays("alice", shard.arrays()) == shard
        True
        """
        found: dict[int, dict[str, np.ndarray]] = {}
        for key in arrays:
            match = _KEY.match(key)
            if match is None:
                raise DataError(
                    f"Unexpected array {key!r} in the shard of {party!r}; expected names "
                    "like 'cell0/X', 'cell0/rows', 'cell0/columns', 'cell0/cohort', "
                    "'cell0/group' and optionally 'cell0/y'."
                )
            found.setdefault(int(match.group(1)), {})[match.group(2)] = np.asarray(arrays[key])
        if sorted(found) != list(range(len(found))):
            raise DataError(
                f"The shard of {party!r} has cells numbered {sorted(found)}; expected 0 to "
                f"{len(found) - 1} without gaps."
            )
        cells = []
        for i in range(len(found)):
            parts = found[i]
            missing = [name for name in _REQUIRED if name not in parts]
            if missing:
                raise DataError(
                    f"Cell {i} of the shard of {party!r} lacks "
                    + ", ".join(f"'cell{i}/{name}'" for name in missing)
                    + "."
                )
            cells.append(
                ShardCell(
                    cohort=int(parts["cohort"]),
                    group=int(parts["group"]),
                    rows=parts["rows"].astype(np.intp),
                    columns=parts["columns"].astype(np.intp),
                    X=parts["X"],
                    y=parts.get("y"),
                )
            )
        return cls(party, tuple(cells))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Shard):
            return NotImplemented
        return self.party == other.party and self.cells == other.cells

    __hash__ = None  # type: ignore[assignment]


def make_shard(
    party: str,
    cells: Sequence[_CellLike],
    label_cohorts: Iterable[int],
    X: Any,
    y: Any,
    n_samples: int,
    n_columns: int,
) -> Shard:
    """Cut ``party``'s cells out of ``X`` (and ``y`` for the cohorts whose labels it holds).

    ``X`` must have ``n_samples`` rows and at least ``n_columns`` columns.
    """
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] != n_samples or X.shape[1] < n_columns:
        raise DataError(
            f"X must be a matrix with {n_samples} rows and at least {n_columns} columns, the "
            f"dataset the partition was applied to. Got shape {X.shape}."
        )
    if y is not None:
        y = np.asarray(y)
        if y.ndim == 0 or y.shape[0] != n_samples:
            raise DataError(
                f"y must have {n_samples} entries, one per row of X. Got shape {y.shape}."
            )
    holds = set(label_cohorts)
    return Shard(
        party,
        tuple(
            ShardCell(
                cohort=cell.cohort,
                group=cell.group,
                rows=np.array(cell.rows),
                columns=np.array(cell.columns),
                X=X[np.ix_(cell.rows, cell.columns)],
                y=y[cell.rows] if y is not None and cell.cohort in holds else None,
            )
            for cell in cells
        ),
    )
