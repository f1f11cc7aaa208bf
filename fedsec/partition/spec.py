"""Partition specs: ``KIND:key=value,...`` strings and TOML tables, parsed and checked.

A :class:`PartitionSpec` is data-independent: it says how to lay out the grid,
and :meth:`PartitionSpec.apply` lays it out on one dataset's shape. Its string
form is canonical (options in a fixed order, defaults left out), so two specs
that mean the same thing print the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from fedsec.errors import PartitionError, ValidationError
from fedsec.partition.assemble import assemble
from fedsec.partition.grid import KINDS, Partition
from fedsec.partition.inputs import check_coordinators, check_inputs
from fedsec.partition.layouts import build_layout, known_parties
from fedsec.partition.names import UnknownPartyError
from fedsec.partition.options import Option, options_of


def _check_kind(kind: Any) -> str:
    text = kind.strip().lower() if isinstance(kind, str) else kind
    if text not in KINDS:
        raise PartitionError(f"Unknown partition kind {kind!r}. Valid kinds: {', '.join(KINDS)}.")
    return text


def _cross_check(kind: str, options: dict[str, Any], failed: set[str]) -> list[ValidationError]:
    """Check options against each other; drop counts that an explicit list implies.

    Options in ``failed`` already had a problem and hold their default here.
    """
    problems: list[ValidationError] = []
    names = options.get("names")
    if names is not None and options["parties"] is not None:
        if options["parties"] != len(names):
            problems.append(
                PartitionError(
                    f"'names' lists {len(names)} parties but 'parties' is {options['parties']}. "
                    "Give only one of them, or make them agree."
                )
            )
        else:
            options["parties"] = None
    grid = options.get("owners")
    if grid is not None:
        checks = (("cohorts", len(grid), "rows"), ("groups", len(grid[0]), "columns"))
        for key, size, what in checks:
            if options[key] is not None and options[key] != size:
                problems.append(
                    PartitionError(
                        f"'owners' has {size} {what} but '{key}' is {options[key]}. "
                        f"Drop '{key}' (the grid decides it) or make them agree."
                    )
                )
            elif options[key] is not None:
                options[key] = None
        if options["centres"] != "shared":
            problems.append(
                PartitionError(
                    "'centres' builds the owner grid but 'owners' gives it explicitly. "
                    "Give only one of them."
                )
            )
    if problems or failed & {"names", "parties", "owners", "cohorts", "groups", "centres", "by"}:
        return problems
    parties = known_parties(kind, options)
    if parties is not None:
        for key in ("labels", "roles"):
            given = options.get(key)
            listed = [] if given is None else [p if key == "labels" else p[0] for p in given]
            unknown = [name for name in listed if name not in parties]
            if unknown:
                problems.append(UnknownPartyError(key, unknown, parties))
    return problems


def _normalise(kind: Any, options: Any) -> tuple[str, dict[str, Any]]:
    kind = _check_kind(kind)
    owner = f"partition {kind!r}"
    table = options_of(kind)
    if not isinstance(options, Mapping):
        raise PartitionError(f"The options of {owner} must be a mapping. Got {options!r}.")
    problems: list[ValidationError] = []
    unknown = [key for key in options if key not in table]
    if unknown:
        problems.append(
            PartitionError(
                f"Unknown option(s) {', '.join(map(repr, unknown))} for {owner}. "
                f"Valid options: {', '.join(table)}."
            )
        )
    result: dict[str, Any] = {}
    failed: set[str] = set()
    for name, option in table.items():
        value = options.get(name)
        if value is None:
            result[name] = option.default
            continue
        try:
            result[name] = option.check(value, owner, name)
        except ValidationError as error:
            problems.append(error)
            failed.add(name)
            result[name] = option.default
    problems.extend(_cross_check(kind, result, failed))
    _raise_all(problems, owner)
    return kind, result


def _raise_all(problems: Sequence[ValidationError], owner: str) -> None:
    if not problems:
        return
    if len(problems) == 1:
        problem = problems[0]
        raise problem if isinstance(problem, PartitionError) else PartitionError(str(problem))
    lines = "\n".join(f"  - {problem}" for problem in problems)
    raise PartitionError(f"The {owner} spec has {len(problems)} problems:\n{lines}")


@dataclass(frozen=True)
class PartitionSpec:
    """How to split a dataset among parties, independent of any dataset.

    ``options`` holds every option of the kind; ``None`` means "decided from the
    dataset when applied". Build one with :func:`parse_partition`.

    Examples
    --------
    >>> spec = PartitionSpec("hybrid", {"cohorts": 3, "groups": 3})
    >>> str(spec)
    'hybrid:cohorts=3,groups=3'
    >>> spec.to_dict()
    {'kind': 'hybrid', 'cohorts': 3, 'groups': 3}
    """

    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kind, options = _normalise(self.kind, self.options)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "options", MappingProxyType(options))

    def _given(self) -> list[tuple[str, Option, Any]]:
        return [
            (name, option, self.options[name])
            for name, option in options_of(self.kind).items()
            if self.options[name] != option.default
        ]

    def __str__(self) -> str:
        given = ",".join(f"{name}={option.to_text(value)}" for name, option, value in self._given())
        return f"{self.kind}:{given}" if given else self.kind

    def __hash__(self) -> int:
        return hash(str(self))

    def to_dict(self) -> dict[str, Any]:
        """The spec as a JSON-able TOML-style table; :func:`parse_partition` reads it back."""
        out: dict[str, Any] = {"kind": self.kind}
        out.update((name, option.to_json(value)) for name, option, value in self._given())
        return out

    def apply(
        self,
        *,
        n_samples: int,
        feature_groups: Mapping[str, Sequence[int]],
        y: np.ndarray | None = None,
        cohorts: np.ndarray | None = None,
        rng: np.random.Generator,
        coordinators: Sequence[tuple[str, str]] = (),
    ) -> Partition:
        """Lay the grid out on a dataset of ``n_samples`` rows and the given column groups.

        Parameters
        ----------
        n_samples : int
            Rows of the dataset.
        feature_groups : mapping of str to sequence of int
            The dataset's named column groups (``{"all": range(d)}`` without natural groups).
        y : numpy.ndarray, optional
            Class codes, one per row; row splits are then stratified.
        cohorts : numpy.ndarray, optional
            A site id per row, used by ``by=site``.
        rng : numpy.random.Generator
            The only source of randomness: the same state gives the same partition.
        coordinators : sequence of (str, str)
            Data-less parties ``(name, role)`` appended after the data owners.

        Returns
        -------
        Partition

        Examples
        --------
        >>> part = parse_partition("hybrid:cohorts=2,groups=3").apply(
        ...     n_samples=10, feature_groups={"all": range(6)},
        ...     rng=np.random.default_rng(0), coordinators=[("server", "server")])
        >>> part.parties
        ('hospital1', 'centre1', 'centre2', 'hospital2', 'server')
        """
        shape = check_inputs(
            n_samples=n_samples, feature_groups=feature_groups, y=y, cohorts=cohorts, rng=rng
        )
        pairs = check_coordinators(coordinators)
        layout = build_layout(self.kind, self.options, shape, rng)
        return assemble(
            layout, n_samples=shape.n_samples, coordinators=pairs, rng=rng, spec=str(self)
        )


def _parse_text(text: str) -> PartitionSpec:
    kind_text, _, rest = text.strip().partition(":")
    kind = _check_kind(kind_text)
    table = options_of(kind)
    owner = f"partition {kind!r}"
    raw: dict[str, Any] = {}
    problems: list[ValidationError] = []
    for item in rest.split(",") if rest.strip() else []:
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key:
            problems.append(
                PartitionError(f"Option {item.strip()!r} is not of the form key=value.")
            )
        elif key in raw:
            problems.append(PartitionError(f"Option {key!r} is given twice."))
        else:
            raw[key] = table[key].from_text(value) if key in table else value
    _raise_all(problems, owner)
    return PartitionSpec(kind, raw)


def parse_partition(spec: str | Mapping[str, Any] | PartitionSpec) -> PartitionSpec:
    """Read a partition spec from a string or a TOML table.

    Parameters
    ----------
    spec : str or mapping
        ``KIND`` or ``KIND:key=value,key=value`` (lists as ``a+b``, the owner grid as
        ``a+b+c/d+e+f``, roles as ``a:hospital+b:centre``), or a mapping with ``kind``
        and the same keys (lists, a list of lists for ``owners``, a table for ``roles``).

    Returns
    -------
    PartitionSpec

    Raises
    ------
    PartitionError
        Listing every problem of the spec at once: unknown kind or keys (with the valid
        ones), bad values (in the standard message), options that contradict each other.

    Examples
    --------
    >>> str(parse_partition("vertical:parties=4"))
    'vertical:parties=4'
    >>> paper = {"kind": "hybrid",
    ...          "owners": [["hospital1", "centre1", "centre2"],
    ...                     ["hospital2", "centre3", "centre2"]]}
    >>> str(parse_partition(paper))
    'hybrid:owners=hospital1+centre1+centre2/hospital2+centre3+centre2'
    """
    if isinstance(spec, PartitionSpec):
        return spec
    if isinstance(spec, str):
        return _parse_text(spec)
    if isinstance(spec, Mapping):
        if "kind" not in spec:
            raise PartitionError(
                f"A partition table needs a 'kind' key: one of {', '.join(KINDS)}."
            )
        return PartitionSpec(spec["kind"], {k: v for k, v in spec.items() if k != "kind"})
    raise PartitionError(
        f"A partition spec must be a string like 'hybrid:cohorts=2' or a mapping with 'kind'. "
        f"Got {spec!r}."
    )
