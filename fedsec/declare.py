"""Parameter constraints declared beside each field, checked at construction.

A ``Params`` dataclass derives from :class:`Declared` and states each field's
constraint once, in its annotation::

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        n_landmarks: Annotated[int, Int(min=1)] = 50
        method: Annotated[str, Choice("P", "U", "N")] = "P"
        gamma: Annotated[float, Float(min=0, min_inclusive=False)] = 1.0
        clip: Annotated[float | None, Float(min=0)] = None  # None is let through

Building the instance checks every declared field with the checks of
:mod:`fedsec.validation`, so a refusal reads as everywhere else: "The
'n_landmarks' parameter of protocol 'fedcg-naive' must be an int >= 1. Got 0
instead." The owner is the component's registered kind and name when
:func:`fedsec.params.build_params` builds the instance (:func:`owning`), and the
class's qualified name when it is built directly. A ``__post_init__`` written
by hand runs after the declared checks and keeps what relates fields to each
other; :func:`owner_of` gives it the same owner for its messages.
``fedsec describe`` reads the declarations (:func:`declared_constraints`).
"""

from __future__ import annotations

import typing
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from fedsec.validation import Constraint

_owner: ContextVar[str | None] = ContextVar("fedsec_params_owner", default=None)
_declared: weakref.WeakKeyDictionary[type, dict[str, tuple[Constraint, bool]]] = (
    weakref.WeakKeyDictionary())


def Int(*, min: int | None = None, max: int | None = None) -> Constraint:
    """An int (not a bool) within ``[min, max]``, either bound optional.

    Examples
    --------
    >>> Int(min=1).text()
    '>= 1'
    """
    return Constraint("int", min_value=min, max_value=max)


def Float(*, min: float | None = None, max: float | None = None,
          min_inclusive: bool = True, max_inclusive: bool = True) -> Constraint:
    """A finite number from ``min`` to ``max``, each bound optional and included unless
    ``min_inclusive`` or ``max_inclusive`` is false.

    Examples
    --------
    >>> Float(min=0, min_inclusive=False, max=0.5).text()
    '(0, 0.5]'
    """
    return Constraint("number", min_value=min, max_value=max, min_inclusive=min_inclusive,
                      max_inclusive=max_inclusive)


def Choice(*choices: str) -> Constraint:
    """One of ``choices``, in the order the messages list them.

    Examples
    --------
    >>> Choice("sum", "moments").text()
    "one of 'sum', 'moments'"
    """
    if not choices:
        raise ValueError("Choice needs at least one allowed value.")
    return Constraint("choice", choices=tuple(choices))


def Bool() -> Constraint:
    """``True`` or ``False`` (not 0, 1 or a string)."""
    return Constraint("bool")


@contextmanager
def owning(owner: str) -> Iterator[None]:
    """Within the block, declared checks and :func:`owner_of` name ``owner``
    (``"attack 'edm-completion'"``)."""
    token = _owner.set(owner)
    try:
        yield
    finally:
        _owner.reset(token)


def owner_of(params: Any) -> str:
    """Who ``params`` belongs to, for messages: the registered kind and name while
    :func:`fedsec.params.build_params` builds it, else its class's qualified name."""
    return _owner.get() or type(params).__qualname__


def declared_constraints(params_cls: type) -> dict[str, tuple[Constraint, bool]]:
    """Each declared field's constraint and whether the field's type admits ``None``.

    Raises ``TypeError`` naming the class when its annotations do not resolve.

    Examples
    --------
    >>> from fedsec.defenses.gaussian_noise import GaussianNoise
    >>> constraint, optional = declared_constraints(GaussianNoise.Params)["sigma"]
    >>> constraint.text(), optional
    ('>= 0', False)
    """
    if params_cls not in _declared:
        _declared[params_cls] = _read_declarations(params_cls)
    return _declared[params_cls]


def _read_declarations(params_cls: type) -> dict[str, tuple[Constraint, bool]]:
    try:
        hints = typing.get_type_hints(params_cls, include_extras=True)
    except Exception as error:  # a name that only exists where the class was defined
        raise TypeError(f"The annotations of {params_cls.__qualname__} do not resolve ({error}); "
                        "declare its constraints with names defined at module level.") from None
    out: dict[str, tuple[Constraint, bool]] = {}
    for name, hint in hints.items():
        if typing.get_origin(hint) is not typing.Annotated:
            continue
        inner, *extras = typing.get_args(hint)
        found = [x for x in extras if isinstance(x, Constraint)]
        if len(found) > 1:
            raise TypeError(f"{params_cls.__qualname__}.{name} declares {len(found)} "
                            "constraints; state one.")
        if found:
            out[name] = (found[0], type(None) in typing.get_args(inner))
    return out


def check_declared(params: Any) -> None:
    """Refuse the first field of ``params`` that breaks its declared constraint."""
    owner = owner_of(params)
    for name, (constraint, optional) in declared_constraints(type(params)).items():
        value = getattr(params, name)
        if not (optional and value is None):
            constraint.check(value, owner=owner, name=name)


class Declared:
    """Base of a ``Params`` dataclass whose fields declare their constraints.

    Its ``__post_init__`` checks the declarations, then runs the ``__post_init__`` each class
    of the hierarchy wrote by hand (relations between fields), base class first: a subclass's
    own checks add to its parents' and never replace them, and none calls ``super()``.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__post_init__")
        if own is not None and own is not _run_declared:
            setattr(cls, RELATIONS, own)
            setattr(cls, "__post_init__", _run_declared)  # noqa: B010

    def __post_init__(self) -> None:
        _run_declared(self)


#: Where a class keeps the ``__post_init__`` it wrote (its relations between fields).
RELATIONS = "_declared_relations"


def _run_declared(self: Any) -> None:
    check_declared(self)
    for klass in reversed(type(self).__mro__):
        relations: Callable[[Any], None] | None = klass.__dict__.get(RELATIONS)
        if relations is not None:
            relations(self)
