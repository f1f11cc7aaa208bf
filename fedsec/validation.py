"""Parameter checks with one message format.

Every check raises :class:`~fedsec.errors.ValidationError` with the sentence
"The 'NAME' parameter of OWNER must be EXPECTED. Got VALUE instead." so users
see the same shape of error wherever they make a mistake.

Inside :func:`recording_constraints`, :func:`check_int`, :func:`check_float`
and :func:`check_choice` also record what they enforce, by parameter name, so
that ``fedsec describe`` shows exactly the ranges a ``Params`` class checks.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedsec.errors import DataError, ValidationError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if TYPE_CHECKING:  # numpy loads with the first array check, not with the CLI's --help
    import numpy as np


@dataclass(frozen=True)
class Constraint:
    """What one check enforces on a parameter: an ``int`` or a finite ``number`` within
    bounds, a ``choice`` among ``choices``, or a ``bool``.

    :meth:`check` applies it with the check of this module it stands for, so a
    declared constraint (:mod:`fedsec.declare`) refuses a value in the same words.

    Examples
    --------
    >>> Constraint("number", min_value=0.0, min_inclusive=False, max_value=0.5).text()
    '(0, 0.5]'
    >>> Constraint("choice", choices=("P", "U")).text()
    "one of 'P', 'U'"
    """

    kind: str
    min_value: float | None = None
    max_value: float | None = None
    min_inclusive: bool = True
    max_inclusive: bool = True
    choices: tuple[str, ...] = ()

    def text(self) -> str:
        """A short human reading: ``>= 1``, ``[0, 1]``, ``(0, 0.5]``, ``one of 'a', 'b'``."""
        if self.kind == "choice":
            return "one of " + ", ".join(map(repr, self.choices))
        if self.kind == "bool":
            return "true or false"
        low, high = self.min_value, self.max_value
        if low is not None and high is not None:
            return (f"{'[' if self.min_inclusive else '('}{_number(low)}, {_number(high)}"
                    f"{']' if self.max_inclusive else ')'}")
        if low is not None:
            return f"{'>=' if self.min_inclusive else '>'} {_number(low)}"
        if high is not None:
            return f"{'<=' if self.max_inclusive else '<'} {_number(high)}"
        return "any int" if self.kind == "int" else "finite"

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form: the kind with its bounds (both inclusive unless stated) or choices."""
        if self.kind == "choice":
            return {"kind": "choice", "choices": list(self.choices)}
        if self.kind == "bool":
            return {"kind": "bool"}
        out: dict[str, Any] = {"kind": self.kind}
        if self.min_value is not None:
            out.update(min=self.min_value, min_inclusive=self.min_inclusive)
        if self.max_value is not None:
            out.update(max=self.max_value, max_inclusive=self.max_inclusive)
        return out

    def check(self, value: Any, *, owner: str, name: str) -> Any:
        """Refuse ``value`` unless it meets this constraint (the message names ``owner`` and
        ``name``); return it converted as the matching check does."""
        if self.kind == "choice":
            return check_choice(value, owner=owner, name=name, choices=self.choices)
        if self.kind == "bool":
            return check_bool(value, owner=owner, name=name)
        if self.kind == "int":
            low, high = self.min_value, self.max_value
            return check_int(value, owner=owner, name=name,
                             min_value=None if low is None else int(low),
                             max_value=None if high is None else int(high))
        if self.kind == "number":
            return check_float(value, owner=owner, name=name, min_value=self.min_value,
                               max_value=self.max_value, min_inclusive=self.min_inclusive,
                               max_inclusive=self.max_inclusive)
        raise ValueError(f"Unknown constraint kind {self.kind!r}.")


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


_recorded: ContextVar[dict[str, list[Constraint]] | None] = ContextVar(
    "fedsec_recorded_constraints", default=None)


@contextmanager
def recording_constraints() -> Iterator[dict[str, list[Constraint]]]:
    """Within the block, the checks record what they enforce, by parameter name.

    Examples
    --------
    >>> with recording_constraints() as seen:
    ...     _ = check_int(3, owner="demo", name="n_rounds", min_value=1)
    >>> seen["n_rounds"][0].text()
    '>= 1'
    """
    sink: dict[str, list[Constraint]] = {}
    token = _recorded.set(sink)
    try:
        yield sink
    finally:
        _recorded.reset(token)


def _record(name: str, constraint: Constraint) -> None:
    sink = _recorded.get()
    if sink is not None and constraint not in sink.setdefault(name, []):
        sink[name].append(constraint)


def param_error(owner: str, name: str, expected: str, got: Any) -> ValidationError:
    """Build the standard error for a bad parameter value."""
    return ValidationError(
        f"The {name!r} parameter of {owner} must be {expected}. Got {got!r} instead."
    )


def check_int(
    value: Any, *, owner: str, name: str, min_value: int | None = None,
    max_value: int | None = None,
) -> int:
    """Return ``value`` as an int, refusing bools, floats and out-of-range values."""
    _record(name, Constraint("int", min_value=min_value, max_value=max_value))
    bounds = _bounds_text(min_value, max_value)
    expected = f"an int{bounds}"
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise param_error(owner, name, expected, value)
    value = int(value)
    if (min_value is not None and value < min_value) or (
        max_value is not None and value > max_value
    ):
        raise param_error(owner, name, expected, value)
    return value


def check_float(
    value: Any, *, owner: str, name: str, min_value: float | None = None,
    max_value: float | None = None, min_inclusive: bool = True, max_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite float within the given bounds."""
    _record(name, Constraint("number", min_value=min_value, max_value=max_value,
                             min_inclusive=min_inclusive, max_inclusive=max_inclusive))
    low = "" if min_value is None else (">= " if min_inclusive else "> ") + f"{min_value}"
    high = "" if max_value is None else ("<= " if max_inclusive else "< ") + f"{max_value}"
    bounds = " and ".join(b for b in (low, high) if b)
    expected = "a finite number" + (f" {bounds}" if bounds else "")
    if isinstance(value, bool) or not isinstance(value, Real):
        raise param_error(owner, name, expected, value)
    value = float(value)
    if not math.isfinite(value):
        raise param_error(owner, name, expected, value)
    if min_value is not None and (value < min_value or (not min_inclusive and value == min_value)):
        raise param_error(owner, name, expected, value)
    if max_value is not None and (value > max_value or (not max_inclusive and value == max_value)):
        raise param_error(owner, name, expected, value)
    return value


def check_choice(value: Any, *, owner: str, name: str, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``."""
    options = tuple(choices)
    _record(name, Constraint("choice", choices=options))
    if value not in options:
        raise param_error(owner, name, "one of " + ", ".join(map(repr, options)), value)
    return str(value)


def check_bool(value: Any, *, owner: str, name: str) -> bool:
    """Return ``value`` if it is a bool (``numpy.bool_`` included); refuse 0, 1 and strings."""
    _record(name, Constraint("bool"))
    numpy_bool = (type(value).__module__ == "numpy" and getattr(value, "shape", None) == ()
                  and getattr(value, "dtype", None) == "bool")
    if not (isinstance(value, bool) or numpy_bool):
        raise param_error(owner, name, "a bool", value)
    return bool(value)


def check_finite(array: np.ndarray, *, what: str, columns: Iterable[str] | None = None) -> None:
    """Refuse NaN or inf in a numeric array, naming the first offending column.

    Parameters
    ----------
    array : numpy.ndarray
        One- or two-dimensional numeric array.
    what : str
        What the array is, for the message (for example ``"dataset 'pima'"``).
    columns : iterable of str, optional
        Column names of a two-dimensional array.
    """
    import numpy as np

    arr = np.asarray(array)
    if arr.dtype.kind not in "fc":
        return
    bad = ~np.isfinite(arr)
    if not bad.any():
        return
    if arr.ndim == 2:
        col = int(np.flatnonzero(bad.any(axis=0))[0])
        row = int(np.flatnonzero(bad[:, col])[0])
        names = list(columns) if columns is not None else []
        label = names[col] if col < len(names) else f"#{col}"
        count = int(bad[:, col].sum())
        raise DataError(
            f"{what} has {count} NaN or infinite value(s) in column {label!r} "
            f"(first at row {row}). Drop or impute those rows before using it."
        )
    index = int(np.flatnonzero(bad.ravel())[0])
    raise DataError(
        f"{what} has NaN or infinite values (first at position {index}). "
        "Drop or impute them before using it."
    )


def read_toml(path: Path, *, what: str, missing: str) -> dict[str, Any]:
    """The table of the TOML file at ``path``; a ValidationError saying ``missing`` when there is
    no such file, or naming ``what`` when the file is not valid TOML."""
    if not path.is_file():
        raise ValidationError(missing)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ValidationError(f"{what}: invalid TOML ({error}).") from None


def _bounds_text(min_value: int | None, max_value: int | None) -> str:
    if min_value is not None and max_value is not None:
        return f" in [{min_value}, {max_value}]"
    if min_value is not None:
        return f" >= {min_value}"
    if max_value is not None:
        return f" <= {max_value}"
    return ""
