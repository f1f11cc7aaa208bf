"""How each partition kind lays out its grid on a dataset's shape.

- ``horizontal``: one cohort per party (all columns); each party holds its labels.
- ``vertical``: one cohort (all rows); one column group per party; labels with
  the parties named in ``labels`` (the first party by default).
- ``hybrid`` (paper 000): cohorts × groups; hospital ``h`` owns the clinical
  group (group 0) of cohort ``h`` and its labels; omics centres own the other
  groups, either one centre per group serving every cohort (``centres=shared``)
  or one per (cohort, group) (``centres=per-cohort``), unless ``owners`` gives
  the grid explicitly.
- ``random`` (paper 004): one cohort (all rows), one group per party; each party
  holds a random ``features`` share of the columns and a random ``samples`` share
  of the rows, drawn independently per party, so columns and rows may be held by
  several parties (and some by none). A party's group is the columns it is the
  first to hold; its cell holds all of its columns. Every party holds the labels
  of its rows. Role ``client``.

A party listed in ``labels`` holds the labels of every cohort in which it owns
a cell; without ``labels`` each cohort's labels go to the owner of its first cell.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fedsec.errors import PartitionError
from fedsec.partition.assemble import Layout, grid_parties, resolve_labels, resolve_roles
from fedsec.partition.inputs import DataShape
from fedsec.partition.splits import contiguous_groups, even_blocks, sample_blocks, site_blocks

Options = Mapping[str, Any]


def default_names(count: int) -> tuple[str, ...]:
    """``party1`` .. ``partyN``."""
    return tuple(f"party{i}" for i in range(1, count + 1))


def hybrid_owner_grid(n_cohorts: int, n_groups: int, centres: str) -> tuple[tuple[str, ...], ...]:
    """The default hybrid owner grid: hospitals in group 0, omics centres in the others.

    Examples
    --------
    >>> hybrid_owner_grid(2, 3, "shared")
    (('hospital1', 'centre1', 'centre2'), ('hospital2', 'centre1', 'centre2'))
    >>> hybrid_owner_grid(2, 2, "per-cohort")
    (('hospital1', 'centre1_1'), ('hospital2', 'centre2_1'))
    """

    def centre(h: int, g: int) -> str:
        return f"centre{g}" if centres == "shared" else f"centre{h}_{g}"

    return tuple(
        (f"hospital{h}", *(centre(h, g) for g in range(1, n_groups)))
        for h in range(1, n_cohorts + 1)
    )


def known_parties(kind: str, options: Options) -> tuple[str, ...] | None:
    """The data parties a spec will have, or ``None`` when that depends on the dataset."""
    if options.get("names") is not None:
        return tuple(options["names"])
    if kind == "hybrid":
        if options["owners"] is not None:
            return grid_parties(options["owners"])
        if options["by"] == "site" or options["cohorts"] is None or options["groups"] is None:
            return None
        return grid_parties(
            hybrid_owner_grid(options["cohorts"], options["groups"], options["centres"])
        )
    if options["parties"] is not None:
        return default_names(options["parties"])
    if kind == "horizontal" and options["by"] == "even":
        return default_names(3)
    return None


def _sites(shape: DataShape, kind: str) -> tuple[tuple[Any, ...], tuple[np.ndarray, ...]]:
    if shape.sites is None:
        raise PartitionError(
            f"The {kind} partition uses by=site, which needs a site id per row: pass "
            "cohorts=... to apply(), or use by=even."
        )
    return site_blocks(shape.sites)


def _agree(what: str, asked: int | None, found: int, source: str, fix: str) -> None:
    if asked is not None and asked != found:
        raise PartitionError(f"{what} is {asked} but {source} {found}. {fix}")


def _columns(
    shape: DataShape, n_groups: int, kind: str
) -> tuple[tuple[np.ndarray, ...], tuple[str, ...], tuple[str, ...]]:
    """Use the dataset's groups when their count fits, else cut contiguous groups."""
    if len(shape.groups) == n_groups:
        return tuple(c for _, c in shape.groups), shape.group_names, ()
    if n_groups > shape.n_features:
        raise PartitionError(
            f"The {kind} partition asks for {n_groups} column groups but the dataset has only "
            f"{shape.n_features} columns. Use at most {shape.n_features}."
        )
    names = tuple(f"group{g}" for g in range(1, n_groups + 1))
    note = (
        f"The dataset's {len(shape.groups)} feature group(s) "
        f"({', '.join(shape.group_names)}) do not match the {n_groups} groups asked for; "
        f"its {shape.n_features} columns were cut into {n_groups} contiguous near-equal groups "
        f"{names[0]}..{names[-1]}."
    )
    return contiguous_groups(shape.columns, n_groups), names, (note,)


def _horizontal(options: Options, shape: DataShape, rng: np.random.Generator) -> Layout:
    names, size, n = options["names"], options["size"], shape.n_samples
    asked = options["parties"] or (len(names) if names else None)
    notes: list[str] = []
    sites = None
    if options["by"] == "site":
        sites, site_rows = _sites(shape, "horizontal")
        count = len(site_rows)
        _agree(
            "The number of parties",
            asked,
            count,
            "the dataset's site count is",
            "With by=site there is one party per site: drop 'parties'/'names' or match them.",
        )
        if size is None:
            blocks = site_rows
        else:
            for site, rows in zip(sites, site_rows, strict=True):
                if len(rows) < size:
                    raise PartitionError(
                        f"Site {site!r} has {len(rows)} rows, fewer than size={size}. "
                        "Lower 'size' or use by=even."
                    )
            blocks = tuple(sample_blocks(rows, 1, size, rng, shape.y)[0] for rows in site_rows)
    else:
        count = asked or 3
        if size is not None:
            if count * size > n:
                raise PartitionError(
                    f"A horizontal partition of {count} parties × size={size} needs "
                    f"{count * size} rows but the dataset has {n}. Lower 'parties' or 'size'."
                )
            blocks = sample_blocks(np.arange(n), count, size, rng, shape.y)
        else:
            if count > n:
                raise PartitionError(
                    f"A horizontal partition of {count} parties needs at least {count} rows "
                    f"but the dataset has {n}. Use at most {n} parties."
                )
            blocks = even_blocks(np.arange(n), count, rng, shape.y)
    if size is not None:
        stratified = ", stratified by class" if shape.y is not None else ""
        unused = n - count * size
        notes.append(
            f"Each party holds {size} rows sampled without replacement{stratified}; "
            f"{unused} row(s) are held by nobody."
        )
    names = names or default_names(count)
    if len(shape.groups) == 1:
        group_name = shape.group_names[0]
    else:
        group_name = "all"
        notes.append(
            f"Every party holds all {shape.n_features} columns; the dataset's groups "
            f"({', '.join(shape.group_names)}) form the one column group 'all', in order."
        )
    owners = tuple((name,) for name in names)
    return Layout(
        kind="horizontal",
        row_blocks=tuple(blocks),
        column_groups=(shape.columns,),
        group_names=(group_name,),
        owners=owners,
        label_owners=resolve_labels(owners, None),
        roles=resolve_roles(names, lambda _: "client", options["roles"]),
        row_overlap=options["overlap"],
        sites=sites,
        notes=tuple(notes),
    )


def _vertical(options: Options, shape: DataShape, rng: np.random.Generator) -> Layout:
    names, n_groups = options["names"], len(shape.groups)
    count = options["parties"] or (len(names) if names else (n_groups if n_groups > 1 else 2))
    by = options["by"] or ("groups" if n_groups == count else "even")
    notes: tuple[str, ...] = ()
    if by == "groups":
        if n_groups != count:
            raise PartitionError(
                f"A vertical partition with by=groups gives one party per feature group, but "
                f"the dataset has {n_groups} group(s) ({', '.join(shape.group_names)}) and "
                f"{count} parties were asked for. Set parties={n_groups}, or by=even to split "
                "the columns evenly."
            )
        groups, group_names = tuple(c for _, c in shape.groups), shape.group_names
    else:
        if count > shape.n_features:
            raise PartitionError(
                f"A vertical partition of {count} parties needs at least {count} columns but "
                f"the dataset has {shape.n_features}. Use at most {shape.n_features} parties."
            )
        groups = contiguous_groups(shape.columns, count)
        group_names = tuple(f"group{g}" for g in range(1, count + 1))
        notes = (
            f"The dataset's {shape.n_features} columns were cut into {count} contiguous "
            f"near-equal groups, one per party (by=even).",
        )
    names = names or default_names(count)
    owners = (tuple(names),)
    return Layout(
        kind="vertical",
        row_blocks=(np.arange(shape.n_samples),),
        column_groups=groups,
        group_names=group_names,
        owners=owners,
        label_owners=resolve_labels(owners, options["labels"] or names[:1]),
        roles=resolve_roles(names, lambda _: "worker", options["roles"]),
        feature_overlap=options["overlap"],
        notes=notes,
    )


def _hybrid(options: Options, shape: DataShape, rng: np.random.Generator) -> Layout:
    grid = options["owners"]
    sites = None
    if options["by"] == "site":
        sites, blocks = _sites(shape, "hybrid")
        if grid is not None:
            _agree(
                "The owner grid's row count",
                len(grid),
                len(blocks),
                "the dataset's site count is",
                "Give one row of 'owners' per site.",
            )
        _agree(
            "'cohorts'",
            options["cohorts"],
            len(blocks),
            "the dataset's site count is",
            "With by=site there is one cohort per site: drop 'cohorts' or match it.",
        )
    else:
        n_cohorts = len(grid) if grid is not None else (options["cohorts"] or 2)
        if n_cohorts > shape.n_samples:
            raise PartitionError(
                f"A hybrid partition of {n_cohorts} cohorts needs at least {n_cohorts} rows "
                f"but the dataset has {shape.n_samples}. Use at most {shape.n_samples} cohorts."
            )
        blocks = even_blocks(np.arange(shape.n_samples), n_cohorts, rng, shape.y)
    n_dataset_groups = len(shape.groups)
    n_groups = (
        len(grid[0])
        if grid is not None
        else (options["groups"] or (n_dataset_groups if n_dataset_groups > 1 else 3))
    )
    groups, group_names, notes = _columns(shape, n_groups, "hybrid")
    owners = grid or hybrid_owner_grid(len(blocks), n_groups, options["centres"])
    parties = grid_parties(owners)
    hospitals = {row[0] for row in owners}
    return Layout(
        kind="hybrid",
        row_blocks=tuple(blocks),
        column_groups=groups,
        group_names=group_names,
        owners=owners,
        label_owners=resolve_labels(owners, options["labels"]),
        roles=resolve_roles(
            parties, lambda name: "hospital" if name in hospitals else "centre", options["roles"]
        ),
        row_overlap=options["overlap_rows"],
        feature_overlap=options["overlap_features"],
        sites=sites,
        notes=notes,
    )


def share_count(share: float, total: int) -> int:
    """How many of ``total`` items a ``share`` holds: rounded, at least one.

    Examples
    --------
    >>> share_count(0.1, 784), share_count(0.001, 10), share_count(1.0, 7)
    (78, 1, 7)
    """
    return min(total, max(1, round(share * total)))


def _random(options: Options, shape: DataShape, rng: np.random.Generator) -> Layout:
    names = options["names"]
    count = options["parties"] or (len(names) if names else 10)
    n_columns = share_count(options["features"], shape.n_features)
    n_rows = share_count(options["samples"], shape.n_samples)
    held: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    seen = np.zeros(0, dtype=np.intp)
    groups = []
    for g in range(count):
        rows = (np.arange(shape.n_samples) if n_rows == shape.n_samples
                else np.sort(rng.choice(shape.n_samples, n_rows, replace=False)))
        columns = np.sort(rng.choice(shape.columns, n_columns, replace=False)).astype(np.intp)
        held[0, g] = (rows.astype(np.intp), columns)
        groups.append(np.setdiff1d(columns, seen).astype(np.intp))
        seen = np.union1d(seen, columns)
    names = names or default_names(count)
    owners = (tuple(names),)
    nobody = shape.n_features - len(seen)
    notes = (
        f"Each of the {count} parties holds {n_columns} of the {shape.n_features} columns and "
        f"{n_rows} of the {shape.n_samples} rows, drawn at random and independently per "
        f"party; {nobody} column(s) are held by nobody.",
    )
    return Layout(
        kind="random",
        row_blocks=(np.arange(shape.n_samples),),
        column_groups=tuple(groups),
        group_names=tuple(f"group{g}" for g in range(1, count + 1)),
        owners=owners,
        label_owners={0: tuple(names)},
        roles=resolve_roles(names, lambda _: "client", options["roles"]),
        notes=notes,
        held=held,
    )


_BUILDERS: dict[str, Callable[[Options, DataShape, np.random.Generator], Layout]] = {
    "horizontal": _horizontal,
    "vertical": _vertical,
    "hybrid": _hybrid,
    "random": _random,
}


def build_layout(kind: str, options: Options, shape: DataShape, rng: np.random.Generator) -> Layout:
    """Lay out the grid of ``kind`` with ``options`` on ``shape``."""
    return _BUILDERS[kind](options, shape, rng)
