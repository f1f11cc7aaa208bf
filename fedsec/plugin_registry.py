"""A typed registry of one kind of component: names to classes, built-ins and entry points.

The bottom of the plug-in machinery: it knows nothing of protocols, backends or
attacks. Each kind's registry is made where its base class lives
(:mod:`fedsec.backends.api` for backends, :mod:`fedsec.registry` for the others),
so a lookup returns that kind's class, not ``Any``.

Built-in names are known from a static index (:mod:`fedsec.builtin_index`), so a
lookup imports only the module of the class it returns, and listing names imports
nothing; entry points are read (not loaded) only when a name is not a built-in.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from fedsec.errors import FedsecError, UnknownNameError, ValidationError

if TYPE_CHECKING:  # pragma: no cover
    from importlib.metadata import EntryPoint

C = TypeVar("C")

SearchPath = Sequence[str | os.PathLike[str]]


def entry_points(group: str) -> Sequence[EntryPoint]:
    """The installed entry points of ``group`` (importlib.metadata, imported when needed)."""
    from importlib.metadata import entry_points as read

    return tuple(read(group=group))


class Registry(Generic[C]):
    """Components of one ``kind`` by name: subclasses of ``base``.

    Built-ins register with :meth:`register` when their module is imported;
    ``builtins`` maps each built-in name to its ``module:Class``, so a lookup
    imports that one module (done lazily, on the first lookup of the name).
    Third-party packages register through the entry-point ``group``. Anywhere a
    name is accepted, ``package.module:Class`` loads a class directly; ``search``
    names directories the module is loaded from explicitly (an audit scenario's own
    folder, appended to ``sys.path`` for the module's own imports:
    :func:`import_from`).

    Examples
    --------
    >>> class Shape:
    ...     name = ""
    >>> shapes: Registry[Shape] = Registry("shape", Shape, builtins={}, group="x")
    >>> @shapes.register("square")
    ... class Square(Shape):
    ...     pass
    >>> shapes.get("square") is Square, Square.name
    (True, 'square')
    """

    def __init__(self, kind: str, base: type, *, builtins: Mapping[str, str],
                 group: str) -> None:
        self.kind = kind
        self.base = base
        self.builtins = dict(builtins)
        self.group = group
        self._table: dict[str, type[C]] = {}
        self._entry_points: dict[str, EntryPoint] | None = None
        self._loaded = False

    def register(self, name: str) -> Callable[[type[C]], type[C]]:
        """Class decorator registering a component under ``name``."""

        def decorate(cls: type[C]) -> type[C]:
            existing = self._table.get(name)
            if existing is not None and existing is not cls:
                raise FedsecError(
                    f"A {self.kind} named {name!r} is already registered "
                    f"({qualname(existing)}); choose another name."
                )
            cls.name = name  # type: ignore[attr-defined]
            self._table[name] = cls
            return cls

        return decorate

    def unregister(self, name: str) -> None:
        """Remove a registration (for tests and interactive work)."""
        self._table.pop(name, None)

    def get(self, name: str, *, search: SearchPath = ()) -> type[C]:
        """The class registered as ``name``, or loaded from ``module:Class``.

        A ``module:Class`` module is looked for in the ``search`` directories
        first, then on the interpreter's import path. A built-in name imports
        only its own module; an unknown name is refused with its close matches
        and every valid name.
        """
        if ":" in name and not name.startswith(":"):
            return self._load_path(name, search)
        if name in self._table:
            return self._table[name]
        if name in self.builtins:
            return self._load_builtin(name)
        found = self._entry_point_table().get(name)
        if found is not None:
            return self._load_entry_point(found)
        known = self.names()
        raise UnknownNameError(self.kind, name, known,
                               close=difflib.get_close_matches(name, known, n=3))

    def create(self, name: str, params: dict[str, Any] | None = None, *,
               search: SearchPath = ()) -> C:
        """Instantiate the component ``name`` with ``params``."""
        return self.get(name, search=search)(**(params or {}))

    def classes(self) -> dict[str, type[C]]:
        """Every registered class, built-ins and entry points included, by name (imports
        every one of them)."""
        self._load()
        return dict(sorted(self._table.items()))

    def registered(self) -> dict[str, type[C]]:
        """The classes registered so far, by name (loads nothing)."""
        return dict(sorted(self._table.items()))

    def names(self) -> tuple[str, ...]:
        """Registered names: built-ins, entry points and classes registered so far (imports
        none of them)."""
        return tuple(sorted({*self._table, *self.builtins, *self._entry_point_table()}))

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for name in self.builtins:
            self._load_builtin(name)
        for entry in self._entry_point_table().values():
            self._load_entry_point(entry)

    def _load_builtin(self, name: str) -> type[C]:
        # the module's @register decorator fills the table
        importlib.import_module(self.builtins[name].partition(":")[0])
        cls = self._table.get(name)
        if cls is None or qualname(cast("type", cls)) != self.builtins[name]:
            raise FedsecError(
                f"The index of built-in components says {self.kind} {name!r} is "
                f"{self.builtins[name]}, but that module does not register it; regenerate the "
                "index with `python -m fedsec.index_build`."
            )
        return cls

    def _entry_point_table(self) -> dict[str, EntryPoint]:
        if self._entry_points is None:
            self._entry_points = {ep.name: ep for ep in entry_points(self.group)}
        return self._entry_points

    def _load_entry_point(self, ep: EntryPoint) -> type[C]:
        try:
            cls = ep.load()
        except Exception as error:
            raise FedsecError(
                f"The {self.kind} entry point {ep.name!r} ({ep.value}) failed to load: "
                f"{error}"
            ) from error
        return self.register(ep.name)(self._checked(cls, f"entry point {ep.name!r}"))

    def _load_path(self, path: str, search: SearchPath = ()) -> type[C]:
        module_name, _, attr = path.partition(":")
        try:
            module = import_from(module_name, search)
        except (ImportError, SyntaxError) as error:
            raise ValidationError(
                f"Cannot import {module_name!r} for {self.kind} {path!r}: {error}"
            ) from None
        cls = getattr(module, attr, None)
        if cls is None:
            raise ValidationError(
                f"Module {module_name!r} has no attribute {attr!r} ({self.kind} {path!r})."
            )
        checked = self._checked(cls, repr(path))
        if not getattr(checked, "name", ""):
            checked.name = path  # type: ignore[attr-defined]
        return checked

    def _checked(self, cls: object, what: str) -> type[C]:
        if not (isinstance(cls, type) and issubclass(cls, self.base)):
            raise ValidationError(f"{what} is not a {self.base.__name__} subclass.")
        return cast("type[C]", cls)


#: the scenario folders :func:`import_from` appended to ``sys.path``
_APPENDED: set[str] = set()


def import_from(module_name: str, search: SearchPath = ()) -> Any:
    """Import ``module_name``, loading its top-level module from the ``search`` folders (an
    audit scenario's own) when one holds it.

    A module found there is loaded from that folder explicitly, under its own name (so worker
    processes and pickling find it again), and the folder is appended to ``sys.path`` (never
    put first), so that the module's own imports of its neighbours work while every installed
    or standard module keeps precedence. A module there with the name of one the interpreter
    could import otherwise is refused: it would shadow it for the whole process. A scenario's
    components are code, run with the user's rights.
    """
    top = module_name.partition(".")[0]
    if search and top not in sys.modules:
        folders = [os.path.abspath(os.fspath(d)) for d in search]
        spec = importlib.machinery.PathFinder.find_spec(top, folders)
        if spec is not None and spec.loader is not None:
            shadowed = _installed(top, folders)
            if shadowed is not None:
                raise ValidationError(
                    f"The module {top!r} beside the scenario ({spec.origin}) has the name of "
                    f"an installed or standard module ({shadowed}); rename it: a scenario's "
                    "module may not shadow one.")
            for folder in folders:
                if folder not in sys.path:
                    sys.path.append(folder)
                    _APPENDED.add(folder)
            module = importlib.util.module_from_spec(spec)
            sys.modules[top] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[top]
                raise
    return importlib.import_module(module_name)


def _installed(name: str, folders: Sequence[str]) -> str | None:
    """Where the interpreter would find the top-level module ``name`` outside ``folders`` (a
    built-in, frozen, or on ``sys.path``), or None."""
    if name in sys.builtin_module_names or (
            importlib.machinery.FrozenImporter.find_spec(name) is not None):
        return "built in"
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) not in folders
              and p not in _APPENDED]  # (another scenario's folder shadows nothing)
    found = importlib.machinery.PathFinder.find_spec(name, others)
    return None if found is None else str(found.origin or found.submodule_search_locations)


def qualname(cls: type) -> str:
    """``module:Class`` of a class."""
    return f"{cls.__module__}:{cls.__qualname__}"
