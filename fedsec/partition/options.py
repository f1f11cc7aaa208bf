"""The options each partition kind accepts: defaults, checks and spelling.

One :class:`Option` row says how an option is read from a spec string, how
it is checked (with the standard message of :mod:`fedsec.validation`), and how
it is written back, so parsing and the canonical string cannot drift apart.
A default of ``None`` means "decided from the dataset when the spec is applied".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fedsec.errors import ValidationError
from fedsec.partition.names import RESERVED_CHARACTERS, duplicates, name_problem
from fedsec.validation import check_choice, check_float, check_int, param_error

Checker = Callable[[Any, str, str], Any]


@dataclass(frozen=True)
class Option:
    """How one option of a partition kind is read, checked and written."""

    name: str
    default: Any
    check: Checker
    from_text: Callable[[str], Any]
    to_text: Callable[[Any], str]
    to_json: Callable[[Any], Any]


def _int_from_text(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return text


def _float_from_text(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return text


def _count(value: Any, owner: str, name: str) -> int:
    return check_int(value, owner=owner, name=name, min_value=1)


def _fraction(value: Any, owner: str, name: str) -> float:
    expected = "a finite number >= 0.0 and < 1.0"
    try:
        result = check_float(value, owner=owner, name=name, min_value=0.0, max_value=1.0)
    except ValidationError:
        raise param_error(owner, name, expected, value) from None
    if result >= 1.0:
        raise param_error(owner, name, expected, value)
    return result


def _share(value: Any, owner: str, name: str) -> float:
    return check_float(value, owner=owner, name=name, min_value=0.0, max_value=1.0,
                       min_inclusive=False)


def _choice(*choices: str) -> Checker:
    def check(value: Any, owner: str, name: str) -> str:
        return check_choice(value, owner=owner, name=name, choices=choices)

    return check


def _split_names(value: str) -> list[str]:
    return [part.strip() for part in value.replace(",", "+").split("+")]


def _party_list(value: Any, owner: str, name: str) -> tuple[str, ...]:
    expected = (
        "a non-empty list of distinct party names "
        f"(non-empty strings without the characters {RESERVED_CHARACTERS})"
    )
    items = _split_names(value) if isinstance(value, str) else value
    if not isinstance(items, Sequence) or isinstance(items, str) or len(items) == 0:
        raise param_error(owner, name, expected, value)
    problems = [p for p in (name_problem(item, what="party name") for item in items) if p]
    repeated = duplicates(item for item in items if isinstance(item, str))
    if repeated:
        problems.append("repeated name(s) " + ", ".join(map(repr, repeated)))
    if problems:
        raise _with_problems(param_error(owner, name, expected, value), problems)
    return tuple(items)


def _owner_grid(value: Any, owner: str, name: str) -> tuple[tuple[str, ...], ...]:
    expected = (
        "a rectangular grid of party names, one row per cohort and one column per "
        "feature group (in a spec string: owners=a+b+c/d+e+f)"
    )
    rows = [_split_names(row) for row in value.split("/")] if isinstance(value, str) else value
    if not isinstance(rows, Sequence) or isinstance(rows, str) or len(rows) == 0:
        raise param_error(owner, name, expected, value)
    problems: list[str] = []
    widths = set()
    for h, row in enumerate(rows):
        if not isinstance(row, Sequence) or isinstance(row, str) or len(row) == 0:
            problems.append(f"row {h} is not a non-empty list of party names")
            continue
        widths.add(len(row))
        for g, item in enumerate(row):
            problem = name_problem(item, what=f"owner of cell ({h}, {g})")
            if problem:
                problems.append(problem)
    if len(widths) > 1:
        problems.append("rows have different lengths " + str(sorted(widths)))
    if problems:
        raise _with_problems(param_error(owner, name, expected, value), problems)
    return tuple(tuple(row) for row in rows)


def _role_map(value: Any, owner: str, name: str) -> tuple[tuple[str, str], ...]:
    expected = "a mapping from party name to role (in a spec string: roles=a:hospital+b:centre)"
    if isinstance(value, str):
        pairs: list[tuple[Any, Any]] = []
        for part in value.split("+"):
            party, sep, role = part.partition(":")
            if not sep:
                raise _with_problems(
                    param_error(owner, name, expected, value),
                    [f"{part.strip()!r} is not of the form name:role"],
                )
            pairs.append((party.strip(), role.strip()))
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, Sequence) and all(
        isinstance(pair, Sequence) and not isinstance(pair, str) and len(pair) == 2
        for pair in value
    ):
        pairs = [tuple(pair) for pair in value]
    else:
        raise param_error(owner, name, expected, value)
    if not pairs:
        raise param_error(owner, name, expected, value)
    problems = [
        p
        for party, role in pairs
        for p in (name_problem(party, what="party name"), name_problem(role, what="role"))
        if p
    ]
    repeated = duplicates(party for party, _ in pairs if isinstance(party, str))
    if repeated:
        problems.append("repeated name(s) " + ", ".join(map(repr, repeated)))
    if problems:
        raise _with_problems(param_error(owner, name, expected, value), problems)
    return tuple(sorted(pairs))


def _with_problems(error: ValidationError, problems: Sequence[str]) -> ValidationError:
    return ValidationError(f"{error} Problem: {'; '.join(problems)}.")


def _count_option(name: str, default: int | None = None) -> Option:
    return Option(name, default, _count, _int_from_text, str, lambda v: v)


def _fraction_option(name: str) -> Option:
    return Option(name, 0.0, _fraction, _float_from_text, repr, lambda v: v)


def _share_option(name: str, default: float) -> Option:
    return Option(name, default, _share, _float_from_text, repr, lambda v: v)


def _choice_option(name: str, default: str | None, *choices: str) -> Option:
    return Option(name, default, _choice(*choices), str, str, lambda v: v)


def _list_option(name: str) -> Option:
    return Option(name, None, _party_list, _split_names, "+".join, list)


_ROLES = Option(
    "roles",
    None,
    _role_map,
    str,
    lambda pairs: "+".join(f"{party}:{role}" for party, role in pairs),
    dict,
)
_OWNERS = Option(
    "owners",
    None,
    _owner_grid,
    str,
    lambda grid: "/".join("+".join(row) for row in grid),
    lambda grid: [list(row) for row in grid],
)

#: The options of each kind, in canonical order.
KIND_OPTIONS: dict[str, tuple[Option, ...]] = {
    "horizontal": (
        _count_option("parties"),
        _count_option("size"),
        _fraction_option("overlap"),
        _choice_option("by", "even", "even", "site"),
        _list_option("names"),
        _ROLES,
    ),
    "vertical": (
        _count_option("parties"),
        _choice_option("by", None, "groups", "even"),
        _list_option("labels"),
        _fraction_option("overlap"),
        _list_option("names"),
        _ROLES,
    ),
    "hybrid": (
        _count_option("cohorts"),
        _count_option("groups"),
        _choice_option("centres", "shared", "shared", "per-cohort"),
        _fraction_option("overlap_rows"),
        _fraction_option("overlap_features"),
        _choice_option("by", "even", "even", "site"),
        _OWNERS,
        _list_option("labels"),
        _ROLES,
    ),
    "random": (
        _count_option("parties"),
        _share_option("features", 0.1),
        _share_option("samples", 1.0),
        _list_option("names"),
        _ROLES,
    ),
}


def options_of(kind: str) -> dict[str, Option]:
    """The options of ``kind`` by name, in canonical order.

    Examples
    --------
    >>> list(options_of("vertical"))
    ['parties', 'by', 'labels', 'overlap', 'names', 'roles']
    """
    return {option.name: option for option in KIND_OPTIONS[kind]}
