"""Keyword-only frozen parameter dataclasses, built from user input.

Every component declares its parameters as a frozen dataclass (constraints
declared beside its fields, :mod:`fedsec.declare`, and relations checked in
``__post_init__``); :func:`build_params` turns a mapping (from Python, a TOML
table or ``--set key=value`` strings) into one, refusing unknown names with
their close matches and the valid ones listed, converting strings to the
declared types, and checking under the owner's registered name.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from collections.abc import Mapping
from typing import Any

from fedsec.declare import owning
from fedsec.errors import ValidationError


@dataclasses.dataclass(frozen=True, kw_only=True)
class NoParams:
    """For components without parameters."""


def build_params(params_cls: type, values: Mapping[str, Any], *, owner: str) -> Any:
    """Instantiate ``params_cls`` from ``values``.

    Examples
    --------
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class P:
    ...     n_rounds: int = 1
    >>> build_params(P, {"n_rounds": "3"}, owner="demo").n_rounds
    3
    >>> build_params(P, {"n_round": 3}, owner="demo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedsec.errors.ValidationError: demo has no parameter 'n_round'. Did you mean 'n_rounds'? ...
    """
    fields = {f.name: f for f in dataclasses.fields(params_cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        valid = ", ".join(sorted(fields)) or "none"
        raise ValidationError(
            f"{owner} has no parameter {', '.join(map(repr, unknown))}."
            f"{did_you_mean(unknown, fields)} Valid parameters: {valid}."
        )
    hints = typing.get_type_hints(params_cls)
    converted = {k: _convert(v, hints.get(k), owner, k) for k, v in values.items()}
    try:
        with owning(owner):
            return params_cls(**converted)
    except ValidationError:
        raise
    except (TypeError, ValueError) as error:  # a missing parameter, or a plug-in's own check
        raise ValidationError(f"{owner}: {error}") from None


def params_dict(params: Any) -> dict[str, Any]:
    """A JSON-able dict of a params instance."""
    return {f.name: _jsonable(getattr(params, f.name)) for f in dataclasses.fields(params)}


def parse_assignments(items: list[str] | tuple[str, ...], *, what: str) -> dict[str, str]:
    """Parse ``key=value`` strings (from ``--set``) into a dict of strings."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValidationError(f"{what} {item!r} is not of the form key=value.")
        out[key.strip()] = value.strip()
    return out


def did_you_mean(unknown: typing.Iterable[str], known: typing.Iterable[str]) -> str:
    """`` Did you mean 'a' or 'b'?`` for the close matches among ``known`` of the ``unknown``
    names, or an empty string when none is close.

    Examples
    --------
    >>> did_you_mean(["sigmaa"], ["sigma", "clip"])
    " Did you mean 'sigma'?"
    """
    options = list(known)
    close = [m for name in unknown for m in difflib.get_close_matches(name, options, n=3)]
    return f" Did you mean {' or '.join(map(repr, dict.fromkeys(close)))}?" if close else ""


def _convert(value: Any, hint: Any, owner: str, name: str) -> Any:
    if not isinstance(value, str) or hint is None:
        return value
    items = _tuple_item_type(hint)
    if items is not None:
        return tuple(_convert(v.strip(), items, owner, name) for v in value.split(",") if v.strip())
    target = _scalar_type(hint)
    if target is None or target is str:
        return value
    try:
        if target is bool:
            lowered = value.lower()
            if lowered in ("true", "1", "yes", "on"):
                return True
            if lowered in ("false", "0", "no", "off"):
                return False
            raise ValueError(value)
        return target(value)
    except ValueError:
        raise ValidationError(
            f"The {name!r} parameter of {owner} must be {target.__name__}. Got {value!r} instead."
        ) from None


def _scalar_type(hint: Any) -> type | None:
    if hint in (int, float, bool, str):
        return hint
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if len(args) == 1 and args[0] in (int, float, bool, str):
        return args[0]
    return None


def _tuple_item_type(hint: Any) -> type | None:
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis and args[0] in (int, float, str):
            return args[0]
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value
