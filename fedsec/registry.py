"""Registration of protocols, backends, attacks, defences and scorers by name.

Built-ins register with the :func:`register` decorator when their package is
imported (done lazily, on first lookup). Third-party packages add their own
through an entry-point group per kind (``fedsec.protocols``,
``fedsec.backends``, ``fedsec.attacks``, ``fedsec.defenses``,
``fedsec.scorers``), each entry point naming a class. Anywhere a name is
accepted, ``package.module:Class`` loads a class directly.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, TypeVar

from fedsec.errors import FedsecError, UnknownNameError, ValidationError

#: Kind → (built-in package to import, entry-point group).
KINDS: dict[str, tuple[str, str]] = {
    "protocol": ("protocols", "fedsec.protocols"),
    "backend": ("fedsec.backends.builtin", "fedsec.backends"),
    "attack": ("attacks", "fedsec.attacks"),
    "defense": ("defenses", "fedsec.defenses"),
    "scorer": ("fedsec.scoring", "fedsec.scorers"),
}
#: Packages that also register components of a kind (attack modules define scorers).
ALSO: dict[str, tuple[str, ...]] = {"scorer": ("attacks",)}

_REGISTRY: dict[str, dict[str, type]] = {kind: {} for kind in KINDS}
_LOADED: set[str] = set()

T = TypeVar("T", bound=type)


def register(kind: str, name: str) -> Callable[[T], T]:
    """Class decorator registering a component under ``name``.

    Examples
    --------
    >>> from fedsec.interfaces import Scorer
    >>> @register("scorer", "doc-example")
    ... class Always(Scorer):
    ...     def score(self, reconstruction, truth):
    ...         return {}
    >>> get("scorer", "doc-example") is Always
    True
    >>> unregister("scorer", "doc-example")
    """
    _check_kind(kind)

    def decorate(cls: T) -> T:
        existing = _REGISTRY[kind].get(name)
        if existing is not None and existing is not cls:
            raise FedsecError(
                f"A {kind} named {name!r} is already registered ({_qualname(existing)}); "
                "choose another name."
            )
        cls.name = name
        _REGISTRY[kind][name] = cls
        return cls

    return decorate


def unregister(kind: str, name: str) -> None:
    """Remove a registration (for tests and interactive work)."""
    _REGISTRY[_check_kind(kind)].pop(name, None)


def get(kind: str, name: str) -> Any:
    """The class registered as ``name``, or loaded from ``module:Class``."""
    _check_kind(kind)
    if ":" in name and not name.startswith(":"):
        return _load_path(kind, name)
    table = classes(kind)
    if name not in table:
        raise UnknownNameError(kind, name, table)
    return table[name]


def create(kind: str, name: str, params: dict[str, Any] | None = None) -> Any:
    """Instantiate the component ``name`` with ``params``."""
    return get(kind, name)(**(params or {}))


def classes(kind: str) -> dict[str, type]:
    """Every registered class of ``kind``, built-ins and entry points included."""
    _load(kind)
    return dict(sorted(_REGISTRY[kind].items()))


def names(kind: str) -> tuple[str, ...]:
    """Registered names of ``kind``."""
    return tuple(classes(kind))


def describe(kind: str) -> list[dict[str, Any]]:
    """Name, summary, paper and declared capabilities of each component of ``kind``."""
    return [
        {"kind": kind, "name": n, "summary": c.summary, "paper": c.paper,
         "capabilities": c.capabilities(), "class": _qualname(c)}
        for n, c in classes(kind).items()
    ]


def _load(kind: str) -> None:
    if kind in _LOADED:
        return
    _LOADED.add(kind)
    package, group = KINDS[kind]
    importlib.import_module(package)
    for extra in ALSO.get(kind, ()):
        importlib.import_module(extra)
    for ep in entry_points(group=group):
        try:
            cls = ep.load()
        except Exception as error:
            raise FedsecError(
                f"The {kind} entry point {ep.name!r} ({ep.value}) failed to load: {error}"
            ) from error
        register(kind, ep.name)(cls)


def _load_path(kind: str, path: str) -> type:
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValidationError(
            f"Cannot import {module_name!r} for {kind} {path!r}: {error}"
        ) from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise ValidationError(
            f"Module {module_name!r} has no attribute {attr!r} ({kind} {path!r})."
        )
    from fedsec import interfaces

    base = {"protocol": interfaces.Protocol, "backend": interfaces.MaskingBackend,
            "attack": interfaces.Attack, "defense": interfaces.Defense,
            "scorer": interfaces.Scorer}[kind]
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ValidationError(f"{path!r} is not a {base.__name__} subclass.")
    if not cls.name:
        cls.name = path
    return cls


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise UnknownNameError("component kind", kind, KINDS)
    return kind


def _qualname(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"
