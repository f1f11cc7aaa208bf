"""The partition grid: cohorts × feature groups, one owner per cell, explicit label owners.

A :class:`Partition` checks itself when it is built, so every partition in the
toolkit, whether made by :meth:`PartitionSpec.apply` or read back with
:meth:`Partition.from_dict`, satisfies the same rules: every cell is owned, every
data party owns a non-empty cell, every cohort's labels are held by an owner of
one of its cells, and only coordinators own no data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from fedsec.errors import PartitionError
from fedsec.partition.names import UnknownPartyError, duplicates, name_problem
from fedsec.partition.shard import Shard, make_shard

KINDS = ("horizontal", "vertical", "hybrid", "random")


def _index(values: Any) -> np.ndarray:
    array = np.array(values, dtype=np.intp).reshape(-1)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Cell:
    """One cell of the grid: the rows of a cohort × the columns of a group, and their owner.

    ``rows`` is the cohort's row block followed by the rows shared from the previous
    cohort; ``columns`` is the group's columns followed by those shared from the
    previous group. Both index the dataset the partition was applied to.
    """

    cohort: int
    group: int
    owner: str
    rows: np.ndarray
    columns: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", _index(self.rows))
        object.__setattr__(self, "columns", _index(self.columns))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cell):
            return NotImplemented
        return (
            (self.cohort, self.group, self.owner) == (other.cohort, other.group, other.owner)
            and np.array_equal(self.rows, other.rows)
            and np.array_equal(self.columns, other.columns)
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def is_empty(self) -> bool:
        """Whether the cell has no rows or no columns."""
        return len(self.rows) == 0 or len(self.columns) == 0

    def to_dict(self) -> dict[str, Any]:
        """The cell as JSON-able values."""
        return {
            "cohort": self.cohort,
            "group": self.group,
            "owner": self.owner,
            "rows": self.rows.tolist(),
            "columns": self.columns.tolist(),
        }


@dataclass(frozen=True, eq=False, kw_only=True)
class Partition:
    """Who holds which rows × which columns of one dataset.

    Build one with :meth:`PartitionSpec.apply`; the constructor checks the grid.

    Examples
    --------
    >>> from fedsec.partition import parse_partition
    >>> part = parse_partition("vertical:parties=2").apply(
    ...     n_samples=4, feature_groups={"all": range(3)}, rng=np.random.default_rng(0))
    >>> part.parties, [c.columns.tolist() for c in part.cells]
    (('party1', 'party2'), [[0, 1], [2]])
    """

    kind: str
    parties: tuple[str, ...]
    roles: Mapping[str, str]
    row_blocks: tuple[np.ndarray, ...]
    column_groups: tuple[np.ndarray, ...]
    group_names: tuple[str, ...]
    cells: tuple[Cell, ...]
    label_owners: Mapping[int, tuple[str, ...]]
    n_samples: int
    coordinators: tuple[str, ...] = ()
    row_overlap: float = 0.0
    feature_overlap: float = 0.0
    sites: tuple[Any, ...] | None = None
    notes: tuple[str, ...] = ()
    spec: str = ""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "parties", tuple(self.parties))
        set_(self, "coordinators", tuple(self.coordinators))
        set_(self, "roles", MappingProxyType(dict(self.roles)))
        set_(self, "row_blocks", tuple(_index(block) for block in self.row_blocks))
        set_(self, "column_groups", tuple(_index(group) for group in self.column_groups))
        set_(self, "group_names", tuple(self.group_names))
        set_(self, "cells", tuple(self.cells))
        set_(
            self,
            "label_owners",
            MappingProxyType({int(h): tuple(o) for h, o in self.label_owners.items()}),
        )
        set_(self, "notes", tuple(self.notes))
        if self.sites is not None:
            set_(self, "sites", tuple(self.sites))
        check_partition(self)

    @property
    def n_cohorts(self) -> int:
        """How many row blocks (cohorts) the grid has."""
        return len(self.row_blocks)

    @property
    def n_groups(self) -> int:
        """How many column groups the grid has."""
        return len(self.column_groups)

    @property
    def data_parties(self) -> tuple[str, ...]:
        """The parties that own cells, in grid order."""
        return tuple(p for p in self.parties if p not in self.coordinators)

    def cell(self, cohort: int, group: int) -> Cell:
        """The cell at (``cohort``, ``group``)."""
        return self.cells[cohort * self.n_groups + group]

    def cells_of(self, party: str) -> tuple[Cell, ...]:
        """The cells ``party`` owns, in grid order (none for a coordinator).

        Examples
        --------
        >>> from fedsec.partition import parse_partition
        >>> part = parse_partition("horizontal:parties=2").apply(
        ...     n_samples=4, feature_groups={"all": range(3)}, rng=np.random.default_rng(0))
        >>> len(part.cells_of("party1"))
        1
        """
        if party not in self.parties:
            raise UnknownPartyError("this partition", [party], self.parties)
        return tuple(cell for cell in self.cells if cell.owner == party)

    def label_cohorts(self, party: str) -> tuple[int, ...]:
        """The cohorts whose labels ``party`` holds."""
        if party not in self.parties:
            raise UnknownPartyError("this partition", [party], self.parties)
        return tuple(h for h, owners in self.label_owners.items() if party in owners)

    def shard(self, party: str, X: Any, y: Any = None) -> Shard:
        """The private data of ``party``: its cells of ``X``, with ``y`` where it holds labels.

        Without ``y`` no cell carries labels.

        Examples
        --------
        >>> from fedsec.partition import parse_partition
        >>> part = parse_partition("vertical:parties=2").apply(
        ...     n_samples=3, feature_groups={"all": range(4)}, rng=np.random.default_rng(0))
        >>> X, y = np.arange(12.0).reshape(3, 4), np.array([0, 1, 0])
        >>> shard = part.shard("party2", X, y)
        >>> shard.X.tolist(), shard.y
        ([[2.0, 3.0], [6.0, 7.0], [10.0, 11.0]], None)
        """
        cells = self.cells_of(party)
        n_columns = 1 + max(int(cell.columns.max()) for cell in self.cells if len(cell.columns))
        return make_shard(party, cells, self.label_cohorts(party), X, y, self.n_samples, n_columns)

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary: parties with roles, rows, columns, labels, overlap, notes.

        Examples
        --------
        >>> from fedsec.partition import parse_partition
        >>> part = parse_partition("vertical:parties=2").apply(
        ...     n_samples=3, feature_groups={"all": range(4)}, rng=np.random.default_rng(0))
        >>> [(p["name"], p["role"], p["n_columns"]) for p in part.describe()["parties"]]
        [('party1', 'worker', 2), ('party2', 'worker', 2)]
        """
        from fedsec.partition.describe import describe

        return describe(self)

    def to_dict(self) -> dict[str, Any]:
        """Every index of the partition as JSON-able values; inverse of :meth:`from_dict`.

        Examples
        --------
        >>> import json
        >>> from fedsec.partition import parse_partition
        >>> part = parse_partition("horizontal:parties=2").apply(
        ...     n_samples=4, feature_groups={"all": range(2)}, rng=np.random.default_rng(0))
        >>> Partition.from_dict(json.loads(json.dumps(part.to_dict()))) == part
        True
        """
        return {
            "kind": self.kind,
            "spec": self.spec,
            "n_samples": self.n_samples,
            "parties": list(self.parties),
            "roles": dict(self.roles),
            "coordinators": list(self.coordinators),
            "row_blocks": [block.tolist() for block in self.row_blocks],
            "column_groups": [group.tolist() for group in self.column_groups],
            "group_names": list(self.group_names),
            "cells": [cell.to_dict() for cell in self.cells],
            "label_owners": [list(self.label_owners[h]) for h in range(self.n_cohorts)],
            "row_overlap": self.row_overlap,
            "feature_overlap": self.feature_overlap,
            "sites": None if self.sites is None else list(self.sites),
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Partition:
        """Rebuild a partition from :meth:`to_dict` output (checking it again)."""
        try:
            fields = dict(data)
            fields["cells"] = tuple(Cell(**cell) for cell in data["cells"])
            fields["label_owners"] = dict(enumerate(data["label_owners"]))
        except (KeyError, TypeError) as error:
            raise PartitionError(f"Not a partition dictionary: missing or bad {error}.") from None
        unknown = sorted(set(fields) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise PartitionError(f"Not a partition dictionary: unexpected keys {unknown}.")
        return cls(**fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Partition):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]


def _check_indices(part: Partition) -> None:
    n_rows = np.concatenate(part.row_blocks) if part.row_blocks else np.empty(0, np.intp)
    if len(np.unique(n_rows)) != len(n_rows):
        raise PartitionError("Row blocks overlap: a row belongs to more than one cohort.")
    if len(n_rows) and (n_rows.min() < 0 or n_rows.max() >= part.n_samples):
        raise PartitionError(f"Row blocks index rows outside 0..{part.n_samples - 1}.")
    columns = np.concatenate(part.column_groups) if part.column_groups else n_rows[:0]
    if len(np.unique(columns)) != len(columns) or (len(columns) and columns.min() < 0):
        raise PartitionError("Column groups overlap or hold negative column indices.")
    for cell in part.cells:
        if len(cell.rows) and (cell.rows.min() < 0 or cell.rows.max() >= part.n_samples):
            raise PartitionError(
                f"Cell ({cell.cohort}, {cell.group}) indexes rows outside 0..{part.n_samples - 1}."
            )


def _check_names(part: Partition) -> None:
    if part.kind not in KINDS:
        raise PartitionError(f"Unknown partition kind {part.kind!r}. Valid kinds: {KINDS}.")
    for name in part.parties:
        problem = name_problem(name, what="party name")
        if problem:
            raise PartitionError(problem[0].upper() + problem[1:] + ".")
    repeated = duplicates(part.parties)
    if repeated:
        raise PartitionError(
            "Party names must be unique; repeated: " + ", ".join(map(repr, repeated)) + ". "
            "Rename the coordinators or the data parties so that no two share a name."
        )
    stray = [c for c in part.coordinators if c not in part.parties]
    if stray:
        raise UnknownPartyError("coordinators", stray, part.parties)
    unknown = [name for name in part.roles if name not in part.parties]
    if unknown:
        raise UnknownPartyError("roles", unknown, part.parties)
    missing = [name for name in part.parties if name not in part.roles]
    if missing:
        raise PartitionError(
            "Every party needs a role; none given for " + ", ".join(map(repr, missing)) + "."
        )


def _check_cells(part: Partition) -> None:
    n_cohorts, n_groups = part.n_cohorts, part.n_groups
    if len(part.group_names) != n_groups:
        raise PartitionError(f"{len(part.group_names)} group names for {n_groups} column groups.")
    expected = [(h, g) for h in range(n_cohorts) for g in range(n_groups)]
    if [(c.cohort, c.group) for c in part.cells] != expected:
        raise PartitionError(
            f"The grid has {n_cohorts} cohorts × {n_groups} groups, so it needs exactly one "
            "cell per (cohort, group) in row-major order."
        )
    for cell in part.cells:
        if cell.owner in part.coordinators:
            raise PartitionError(
                f"Coordinator {cell.owner!r} owns cell ({cell.cohort}, {cell.group}); "
                "coordinators hold no data. Give the cell to a data party."
            )
        if cell.owner not in part.parties:
            raise UnknownPartyError(
                f"the owner of cell ({cell.cohort}, {cell.group})", [cell.owner], part.data_parties
            )
    for party in part.data_parties:
        if all(cell.is_empty for cell in part.cells if cell.owner == party):
            raise PartitionError(
                f"Party {party!r} owns no cell with both rows and columns. Give it a "
                "non-empty cell, use fewer parties, or make it a coordinator."
            )


def _check_labels(part: Partition) -> None:
    if sorted(part.label_owners) != list(range(part.n_cohorts)):
        raise PartitionError(
            "label_owners must name the label holders of every cohort "
            f"0..{part.n_cohorts - 1}; got cohorts {sorted(part.label_owners)}."
        )
    for h in range(part.n_cohorts):
        holders = part.label_owners[h]
        unknown = [name for name in holders if name not in part.parties]
        if unknown:
            raise UnknownPartyError(f"the labels of cohort {h}", unknown, part.data_parties)
        cell_owners = {part.cell(h, g).owner for g in range(part.n_groups)}
        if not holders:
            raise PartitionError(
                f"Nobody holds the labels of cohort {h}. Name one of its cell owners "
                f"({', '.join(sorted(cell_owners))}) in 'labels'."
            )
        strangers = [name for name in holders if name not in cell_owners]
        if strangers:
            raise PartitionError(
                f"{', '.join(map(repr, strangers))} hold(s) the labels of cohort {h} but "
                f"own(s) none of its cells; label holders of cohort {h} must be among "
                f"{', '.join(sorted(cell_owners))}."
            )


def check_partition(part: Partition) -> None:
    """Refuse a grid that breaks the partition rules (see the module docstring)."""
    _check_names(part)
    _check_indices(part)
    _check_cells(part)
    _check_labels(part)
