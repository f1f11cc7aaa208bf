"""Registration of protocols, backends, attacks, defences and scorers by name.

One typed :class:`~fedsec.plugin_registry.Registry` per kind: :data:`protocols`,
:data:`backends`, :data:`attacks`, :data:`defenses`, :data:`scorers`
(``registry.protocols.get("fdskl")`` is a ``type[Protocol]``). Built-ins
register with :func:`register` when their module is imported; the index of
:mod:`fedsec.builtin_index` says which module holds each name, so a lookup
imports only that one (and listing names imports nothing). Third-party
packages add their own through an entry-point group per kind
(``fedsec.protocols``, ``fedsec.backends``, ``fedsec.attacks``,
``fedsec.defenses``, ``fedsec.scorers``), each entry point naming a class.
Anywhere a name is accepted, ``package.module:Class`` loads a class directly.

The functions below take the kind as a string, for code that handles every
kind alike (the CLI, audit scenarios).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

from fedsec.backends.api import MaskingBackend, backends
from fedsec.builtin_index import COMPONENTS
from fedsec.errors import UnknownNameError
from fedsec.interfaces import Attack, Defense, Protocol, Scorer
from fedsec.plugin_registry import Registry, SearchPath, qualname


def _builtins(kind: str) -> dict[str, str]:
    return {name: path for name, (path, _) in COMPONENTS.get(kind, {}).items()}


protocols: Registry[Protocol] = Registry("protocol", Protocol, builtins=_builtins("protocol"),
                                         group="fedsec.protocols")
attacks: Registry[Attack] = Registry("attack", Attack, builtins=_builtins("attack"),
                                     group="fedsec.attacks")
defenses: Registry[Defense] = Registry("defense", Defense, builtins=_builtins("defense"),
                                       group="fedsec.defenses")
scorers: Registry[Scorer] = Registry("scorer", Scorer, builtins=_builtins("scorer"),
                                     group="fedsec.scorers")

#: Every kind's registry, by kind.
REGISTRIES: dict[str, Registry[Any]] = {
    "protocol": protocols, "backend": backends, "attack": attacks, "defense": defenses,
    "scorer": scorers,
}
KINDS: tuple[str, ...] = tuple(REGISTRIES)

T = TypeVar("T", bound=type)


def of_kind(kind: str) -> Registry[Any]:
    """The registry of ``kind`` (an unknown kind is refused with the known ones)."""
    if kind not in REGISTRIES:
        raise UnknownNameError("component kind", kind, REGISTRIES)
    return REGISTRIES[kind]


def register(kind: str, name: str) -> Callable[[T], T]:
    """Class decorator registering a component of ``kind`` under ``name``.

    Examples
    --------
    >>> @register("scorer", "doc-example")
    ... class Always(Scorer):
    ...     def score(self, reconstruction, truth):
    ...         return {}
    >>> get("scorer", "doc-example") is Always
    True
    >>> unregister("scorer", "doc-example")
    """
    return of_kind(kind).register(name)  # type: ignore[return-value]


def unregister(kind: str, name: str) -> None:
    """Remove a registration (for tests and interactive work)."""
    of_kind(kind).unregister(name)


@overload
def get(kind: Literal["protocol"], name: str, *, search: SearchPath = ()) -> type[Protocol]: ...
@overload
def get(kind: Literal["backend"], name: str, *,
        search: SearchPath = ()) -> type[MaskingBackend]: ...
@overload
def get(kind: Literal["attack"], name: str, *, search: SearchPath = ()) -> type[Attack]: ...
@overload
def get(kind: Literal["defense"], name: str, *, search: SearchPath = ()) -> type[Defense]: ...
@overload
def get(kind: Literal["scorer"], name: str, *, search: SearchPath = ()) -> type[Scorer]: ...
@overload
def get(kind: str, name: str, *, search: SearchPath = ()) -> type[Any]: ...
def get(kind: str, name: str, *, search: SearchPath = ()) -> type[Any]:
    """The class registered as ``name``, or loaded from ``module:Class`` (its module looked
    for in the ``search`` directories first)."""
    return of_kind(kind).get(name, search=search)


@overload
def create(kind: Literal["protocol"], name: str,
           params: dict[str, Any] | None = None, *,
           search: SearchPath = ()) -> Protocol: ...
@overload
def create(kind: Literal["backend"], name: str,
           params: dict[str, Any] | None = None, *,
           search: SearchPath = ()) -> MaskingBackend: ...
@overload
def create(kind: Literal["attack"], name: str, params: dict[str, Any] | None = None, *,
           search: SearchPath = ()) -> Attack: ...
@overload
def create(kind: Literal["defense"], name: str,
           params: dict[str, Any] | None = None, *,
           search: SearchPath = ()) -> Defense: ...
@overload
def create(kind: Literal["scorer"], name: str, params: dict[str, Any] | None = None, *,
           search: SearchPath = ()) -> Scorer: ...
@overload
def create(kind: str, name: str, params: dict[str, Any] | None = None, *,
           search: SearchPath = ()) -> Any: ...
def create(kind: str, name: str, params: dict[str, Any] | None = None, *,
           search: SearchPath = ()) -> Any:
    """Instantiate the component ``name`` of ``kind`` with ``params``."""
    return of_kind(kind).create(name, params, search=search)


def classes(kind: str) -> dict[str, type[Any]]:
    """Every registered class of ``kind``, built-ins and entry points included."""
    return of_kind(kind).classes()


def names(kind: str) -> tuple[str, ...]:
    """Registered names of ``kind``."""
    return of_kind(kind).names()


def describe(kind: str) -> list[dict[str, Any]]:
    """Name, summary, paper and declared capabilities of each component of ``kind``."""
    return [
        {"kind": kind, "name": n, "summary": c.summary, "paper": c.paper,
         "capabilities": c.capabilities(), "class": qualname(c)}
        for n, c in classes(kind).items()
    ]
