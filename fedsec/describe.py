"""What a component's parameters are: type, default, allowed values and meaning.

Everything is read from the component's ``Params`` dataclass, so a third-party
plug-in is described as fully as a built-in, with nothing to register:

- the meaning is the field's attribute docstring, the string literal on the
  line after the field (the Sphinx convention), read with :mod:`ast` from the
  class and its dataclass bases; a field without one reads ``(no description)``;
- the allowed values are the constraints declared beside the fields
  (:mod:`fedsec.declare`), shown even for a required field, then what the
  checks of :mod:`fedsec.validation` record while the class is built with its
  defaults (:func:`~fedsec.validation.recording_constraints`), so the range
  shown is the one enforced; checks written by hand (``raise
  ValidationError(...)``) are not recorded, and a field's docstring states them;
- the type comes from the annotations, the default from the dataclass field.
  A field without a default, or one whose default the class itself refuses
  (the error names it), is required.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import difflib
import inspect
import re
import textwrap
import typing
from dataclasses import dataclass
from typing import Any

from fedsec import registry
from fedsec.declare import Declared, declared_constraints, owning
from fedsec.errors import UnknownNameError, ValidationError
from fedsec.params import NoParams
from fedsec.plugin_registry import qualname
from fedsec.validation import Constraint, recording_constraints

NO_DESCRIPTION = "(no description)"


@dataclass(frozen=True)
class ParamInfo:
    """One parameter: its name, type, default (None when ``required``), checks and meaning."""

    name: str
    type: str
    default: Any
    required: bool
    constraints: tuple[Constraint, ...]
    meaning: str

    @property
    def allowed(self) -> str:
        """The recorded checks as text (``>= 1 and <= 8``), empty when none was recorded."""
        return " and ".join(c.text() for c in self.constraints)

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"name": self.name, "type": self.type, "default": self.default,
                "required": self.required, "allowed": self.allowed or None,
                "constraints": [c.as_dict() for c in self.constraints],
                "meaning": self.meaning}


@dataclass(frozen=True)
class ComponentInfo:
    """A component: kind, name, one-line summary, paper, class and parameters.

    ``defaults_refused`` is the error the ``Params`` class raises when built
    from its defaults alone (empty when the defaults are accepted).
    """

    kind: str
    name: str
    summary: str
    paper: str
    cls: str
    params: tuple[ParamInfo, ...]
    defaults_refused: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"kind": self.kind, "name": self.name, "summary": self.summary,
                "paper": self.paper, "class": self.cls,
                "params": [p.as_dict() for p in self.params],
                "defaults_refused": self.defaults_refused or None}


def find_component(name: str, kind: str | None = None) -> tuple[str, type]:
    """The kind and class of the component ``name``, looked up in every kind unless ``kind``.

    ``name`` may also be ``package.module:Class``. A name registered in several
    kinds needs ``kind``; an unknown name is refused with its close matches.

    Examples
    --------
    >>> find_component("paillier")[0]
    'backend'
    >>> find_component("multilateraton")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedsec.errors.UnknownNameError: Unknown component 'multilateraton'. Did you mean 'multi...
    """
    kinds = registry.KINDS if kind is None else (registry.of_kind(kind).kind,)
    if ":" in name and not name.startswith(":"):
        return _load_path(name, kinds)
    found = [(k, registry.get(k, name)) for k in kinds if name in registry.names(k)]
    if len(found) > 1:
        options = " or ".join(f"--kind {k}" for k, _ in found)
        raise ValidationError(
            f"{name!r} names {_and(f'{_article(k)} {k}' for k, _ in found)}; choose one with "
            f"{options}.")
    if found:
        return found[0]
    if kind is None:
        _refuse_dataset(name)
    known = sorted({n for k in kinds for n in registry.names(k)})
    raise UnknownNameError(kind or "component", name, known,
                           close=difflib.get_close_matches(name, known, n=3))


def describe_component(kind: str, cls: type) -> ComponentInfo:
    """Kind, name, summary and parameters of the component class ``cls``.

    Examples
    --------
    >>> info = describe_component(*find_component("gaussian-noise"))
    >>> p = info.params[0]
    >>> p.name, p.type, p.default, p.allowed
    ('sigma', 'float', 1.0, '>= 0')
    """
    params_cls = getattr(cls, "Params", NoParams)
    if not dataclasses.is_dataclass(params_cls):
        raise ValidationError(f"{qualname(cls)}.Params is not a dataclass; declare it with "
                              "@dataclass(frozen=True, kw_only=True).")
    name = getattr(cls, "name", "") or qualname(cls)
    params, refused = describe_params(params_cls, owner=f"{kind} {name!r}")
    own_doc = cls.__dict__.get("__doc__") or ""  # not a base class's
    summary = getattr(cls, "summary", "") or _first_line(inspect.cleandoc(own_doc))
    return ComponentInfo(kind=kind, name=name,
                         summary=summary, paper=getattr(cls, "paper", ""), cls=qualname(cls),
                         params=params, defaults_refused=refused)


def describe_params(params_cls: type, owner: str | None = None
                    ) -> tuple[tuple[ParamInfo, ...], str]:
    """Each field of the ``Params`` dataclass described, and the error its defaults raise
    (empty when they are accepted), naming ``owner`` (``"attack 'test-inference'"``) as a
    run would."""
    docs = field_docs(params_cls)
    hints = _type_hints(params_cls)
    seen, refused = recorded_constraints(params_cls, owner)
    fields = dataclasses.fields(params_cls)
    if any(_default(f) is dataclasses.MISSING for f in fields):
        refused = ""  # the missing required fields are why; each says "required" already
    named = {a or b for a, b in re.findall(r"'(\w+)'|\b(\w+)=", refused)}
    out = []
    for field in fields:
        default = _default(field)
        required = default is dataclasses.MISSING or field.name in named
        out.append(ParamInfo(
            name=field.name, type=_type_name(hints.get(field.name, field.type)),
            default=None if default is dataclasses.MISSING else default,
            required=required, constraints=tuple(seen.get(field.name, ())),
            meaning=docs.get(field.name, NO_DESCRIPTION)))
    return tuple(out), refused


def recorded_constraints(params_cls: type, owner: str | None = None
                         ) -> tuple[dict[str, list[Constraint]], str]:
    """What ``params_cls`` enforces: its declared constraints, then what its checks record while
    it is built from its defaults; and the error those defaults raise (empty when accepted; the
    checks up to it are kept)."""
    seen: dict[str, list[Constraint]] = {}
    if issubclass(params_cls, Declared):
        seen = {name: [c] for name, (c, _) in declared_constraints(params_cls).items()}
    refused = ""
    with recording_constraints() as recorded, (
            owning(owner) if owner else contextlib.nullcontext()):
        try:
            params_cls()
        except Exception as error:  # a required field, a refused default, a plug-in's own bug
            refused = " ".join(str(error).split())
    for name, found in recorded.items():
        seen.setdefault(name, []).extend(c for c in found if c not in seen[name])
    return seen, refused


def field_docs(params_cls: type) -> dict[str, str]:
    """Each field's attribute docstring (whitespace folded to one line), bases first, so a
    subclass's docstring replaces its base's and an undocumented override keeps the base's.

    Examples
    --------
    >>> from fedsec.scoring.rows import RowsParams
    >>> sorted(field_docs(RowsParams))
    ['epsilon', 'pool', 'rule', 'seed']
    """
    docs: dict[str, str] = {}
    for klass in reversed(params_cls.__mro__):
        if klass is not object and dataclasses.is_dataclass(klass):
            docs.update(_own_field_docs(klass))
    return docs


def _own_field_docs(klass: type) -> dict[str, str]:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
    except (OSError, TypeError, SyntaxError):  # defined interactively, or no source shipped
        return {}
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef)), None)
    if node is None:
        return {}
    docs = {}
    for stmt, after in zip(node.body, node.body[1:], strict=False):
        if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[stmt.target.id] = " ".join(after.value.value.split())
    return docs


def _type_hints(params_cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(params_cls)
    except Exception:  # an annotation that does not resolve: its text is shown instead
        return {}


def _type_name(hint: Any) -> str:
    if isinstance(hint, str):
        return hint
    if isinstance(hint, type) and not typing.get_args(hint):
        return hint.__name__
    return str(hint).replace("typing.", "")


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


def _load_path(name: str, kinds: tuple[str, ...]) -> tuple[str, type]:
    errors = []
    for kind in kinds:
        try:
            return kind, registry.get(kind, name)
        except ValidationError as error:
            errors.append(str(error))
    raise ValidationError(errors[0] if len(errors) == 1 else
                          f"{name!r} is not a component class: " + "; ".join(errors))


def _refuse_dataset(name: str) -> None:
    from fedsec.data import dataset_names

    if name in dataset_names():
        raise ValidationError(
            f"{name!r} is a dataset, which takes options rather than parameters; "
            "`fedsec list datasets` shows them.")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _and(items: typing.Iterable[str]) -> str:
    words = list(items)
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)
