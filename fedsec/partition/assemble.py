"""From a layout (blocks, groups, owner grid, label holders) to a checked :class:`Partition`.

The layouts of each kind decide *who* owns *which* block; this module adds the
overlap between neighbouring cohorts and groups, appends the coordinators, and
resolves label holders and roles with errors that list the valid names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.errors import PartitionError
from fedsec.partition.grid import Cell, Partition
from fedsec.partition.names import UnknownPartyError
from fedsec.partition.splits import shared_columns, shared_rows


@dataclass(frozen=True, eq=False)
class Layout:
    """The grid of one partition before overlap: what a kind's builder decides."""

    kind: str
    row_blocks: tuple[np.ndarray, ...]
    column_groups: tuple[np.ndarray, ...]
    group_names: tuple[str, ...]
    owners: tuple[tuple[str, ...], ...]
    label_owners: dict[int, tuple[str, ...]]
    roles: dict[str, str]
    row_overlap: float = 0.0
    feature_overlap: float = 0.0
    sites: tuple[Any, ...] | None = None
    notes: tuple[str, ...] = ()
    held: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] | None = None
    """The rows and columns of each cell when they are drawn per party (kind ``random``)
    rather than built from its block, its group and the overlap."""


def grid_parties(owners: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The distinct owners of a grid in row-major order of first appearance.

    Examples
    --------
    >>> grid_parties([["h1", "c1", "c2"], ["h2", "c3", "c2"]])
    ('h1', 'c1', 'c2', 'h2', 'c3')
    """
    return tuple(dict.fromkeys(name for row in owners for name in row))


def resolve_labels(
    owners: Sequence[Sequence[str]], holders: Sequence[str] | None
) -> dict[int, tuple[str, ...]]:
    """Who holds each cohort's labels.

    By default the owner of the cohort's first cell. A listed holder holds the
    labels of every cohort in which it owns a cell.

    Examples
    --------
    >>> resolve_labels([["h1", "c1"], ["h2", "c1"]], None)
    {0: ('h1',), 1: ('h2',)}
    >>> resolve_labels([["h1", "c1"], ["h2", "c1"]], ["c1"])
    {0: ('c1',), 1: ('c1',)}
    """
    if holders is None:
        return {h: (row[0],) for h, row in enumerate(owners)}
    parties = grid_parties(owners)
    unknown = [name for name in holders if name not in parties]
    if unknown:
        raise UnknownPartyError("labels", unknown, parties)
    result = {}
    for h, row in enumerate(owners):
        result[h] = tuple(name for name in holders if name in row)
        if not result[h]:
            raise PartitionError(
                f"No party listed in 'labels' ({', '.join(holders)}) owns a cell of cohort "
                f"{h}, so nobody would hold its labels. Add one of its owners "
                f"({', '.join(dict.fromkeys(row))}) to 'labels'."
            )
    return result


def resolve_roles(
    parties: Sequence[str],
    default: Callable[[str], str],
    overrides: Iterable[tuple[str, str]] | None,
) -> dict[str, str]:
    """Each party's role: ``default(name)`` unless ``overrides`` names it.

    Examples
    --------
    >>> resolve_roles(["a", "b"], lambda name: "worker", [("b", "active_worker")])
    {'a': 'worker', 'b': 'active_worker'}
    """
    roles = {name: default(name) for name in parties}
    given = dict(overrides or ())
    unknown = [name for name in given if name not in roles]
    if unknown:
        raise UnknownPartyError("roles", unknown, parties)
    roles.update(given)
    return roles


def assemble(
    layout: Layout,
    *,
    n_samples: int,
    coordinators: Sequence[tuple[str, str]],
    rng: np.random.Generator,
    spec: str,
) -> Partition:
    """Add overlap and coordinators to ``layout`` and build the checked :class:`Partition`."""
    data_parties = grid_parties(layout.owners)
    clash = [name for name, _ in coordinators if name in data_parties]
    if clash:
        raise PartitionError(
            f"Coordinator name(s) {', '.join(map(repr, clash))} are also data parties of the "
            "grid. Party names must be unique: rename the coordinator(s)."
        )
    extra_rows = shared_rows(layout.row_blocks, layout.row_overlap, rng)
    extra_columns = shared_columns(layout.column_groups, layout.feature_overlap)
    held = layout.held or {}
    cells = tuple(
        Cell(
            cohort=h,
            group=g,
            owner=layout.owners[h][g],
            rows=held[h, g][0] if (h, g) in held else np.concatenate([block, extra_rows[h]]),
            columns=(held[h, g][1] if (h, g) in held
                     else np.concatenate([group, extra_columns[g]])),
        )
        for h, block in enumerate(layout.row_blocks)
        for g, group in enumerate(layout.column_groups)
    )
    roles = dict(layout.roles)
    roles.update(dict(coordinators))
    return Partition(
        kind=layout.kind,
        parties=data_parties + tuple(name for name, _ in coordinators),
        roles=roles,
        row_blocks=layout.row_blocks,
        column_groups=layout.column_groups,
        group_names=layout.group_names,
        cells=cells,
        label_owners=layout.label_owners,
        n_samples=n_samples,
        coordinators=tuple(name for name, _ in coordinators),
        row_overlap=layout.row_overlap,
        feature_overlap=layout.feature_overlap,
        sites=layout.sites,
        notes=layout.notes,
        spec=spec,
    )
