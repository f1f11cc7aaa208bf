"""A readable, JSON-able summary of a partition, for reports and logs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fedsec.partition.grid import Partition


def _party(part: Partition, name: str) -> dict[str, Any]:
    cells = part.cells_of(name)
    empty = np.empty(0, dtype=np.intp)
    rows = np.unique(np.concatenate([empty, *(c.rows for c in cells)]))
    columns = np.unique(np.concatenate([empty, *(c.columns for c in cells)]))
    return {
        "name": name,
        "role": part.roles[name],
        "coordinator": name in part.coordinators,
        "cells": [[c.cohort, c.group] for c in cells],
        "n_rows": len(rows),
        "n_columns": len(columns),
        "labels_of_cohorts": list(part.label_cohorts(name)),
    }


def _held_twice(indices: list[np.ndarray]) -> int:
    """How many distinct indices appear in two or more of ``indices``."""
    _, counts = np.unique(np.concatenate(indices), return_counts=True)
    return int((counts > 1).sum())


def describe(part: Partition) -> dict[str, Any]:
    """Summarise ``part``: kind, parties with role, rows, columns, label ownership, overlap.

    Examples
    --------
    >>> from fedsec.partition import parse_partition
    >>> part = parse_partition("horizontal:parties=2,overlap=0.5").apply(
    ...     n_samples=8, feature_groups={"all": range(3)}, rng=np.random.default_rng(0))
    >>> summary = describe(part)
    >>> [p["n_rows"] for p in summary["parties"]], summary["overlap"]["shared_rows"]
    ([6, 6], 4)
    """
    base_rows = sum(len(block) for block in part.row_blocks)
    if part.kind == "random":  # rows and columns drawn per party: count the repeated ones
        shared_rows = _held_twice([c.rows for c in part.cells])
        shared_columns = _held_twice([c.columns for c in part.cells])
    else:
        shared_rows = sum(
            len(part.cell(h, 0).rows) - len(part.row_blocks[h]) for h in range(part.n_cohorts)
        )
        shared_columns = sum(
            len(part.cell(0, g).columns) - len(part.column_groups[g])
            for g in range(part.n_groups)
        )
    cohorts = []
    for h, block in enumerate(part.row_blocks):
        entry: dict[str, Any] = {
            "cohort": h,
            "n_rows": len(block),
            "owners": [part.cell(h, g).owner for g in range(part.n_groups)],
            "label_owners": list(part.label_owners[h]),
        }
        if part.sites is not None:
            entry["site"] = part.sites[h]
        cohorts.append(entry)
    return {
        "kind": part.kind,
        "spec": part.spec,
        "n_samples": part.n_samples,
        "n_rows_assigned": base_rows,
        "n_features": sum(len(group) for group in part.column_groups),
        "parties": [_party(part, name) for name in part.parties],
        "cohorts": cohorts,
        "groups": [
            {"group": g, "name": name, "n_columns": len(part.column_groups[g])}
            for g, name in enumerate(part.group_names)
        ],
        "overlap": {
            "rows": part.row_overlap,
            "features": part.feature_overlap,
            "shared_rows": shared_rows,
            "shared_columns": shared_columns,
        },
        "notes": list(part.notes),
    }
