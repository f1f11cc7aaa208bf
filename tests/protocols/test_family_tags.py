"""Each family's tags live in its ``tags.py``: nothing else types one (read from the source)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import fedsec.protocols

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("fedsec", "protocols", "attacks", "defenses", "tests")
FAMILIES = sorted(m.name for m in pkgutil.iter_modules(fedsec.protocols.__path__) if m.ispkg)


def _tags_module(family: str):
    return importlib.import_module(f"fedsec.protocols.{family}.tags")


def _tag_values(module) -> set[str]:
    family = module.__name__.split(".")[-2]
    return {v for k, v in vars(module).items()
            if k.isupper() and isinstance(v, str) and v.startswith(f"{family}.")}


def test_every_family_has_a_contract() -> None:
    assert {"fedcg", "fdskl", "nri_dc"} <= set(FAMILIES)
    for family in FAMILIES:
        module = _tags_module(family)
        assert _tag_values(module), f"{family}/tags.py names no tag"
        assert all(v in _tag_values(module) for v in module.RENAMED.values())


def test_tags_are_namespaced_by_their_family_and_unique() -> None:
    seen: dict[str, str] = {}
    for family in FAMILIES:
        for value in _tag_values(_tags_module(family)):
            assert value.split(".")[0] == family
            assert value not in seen, f"{value} is defined by {seen.get(value)} and {family}"
            seen[value] = family


def _literals(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, value) of every string literal that is not a docstring."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            out.append((node.lineno, node.value))
    return out


def _tag_positions(tree: ast.AST) -> list[tuple[int, str]]:
    """Strings used where a tag goes: ``tag=``, compared with ``.tag``, sent or declared."""
    found = []

    def strings(node: ast.AST) -> list[ast.Constant]:
        return [n for n in ast.walk(node)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)]

    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "tag":
            found += strings(node.value)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "tag" for s in sides):
                for side in sides:
                    found += strings(side)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("send", "broadcast") and len(node.args) >= 3:
            found += strings(node.args[2])
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in ("exposes", "needs_tags", "needs_any_tags",
                                                     "points") for t in node.targets):
            found += strings(node.value)
    return [(n.lineno, n.value) for n in found]


def _python_files() -> list[Path]:
    files = []
    for top in SOURCES:
        files += [p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(files)


def test_no_tag_is_typed_outside_its_family_contract() -> None:
    current: dict[str, str] = {}
    legacy: dict[str, set[str]] = {}
    for family in FAMILIES:
        module = _tags_module(family)
        current.update({v: family for v in _tag_values(module)})
        for old in module.RENAMED:
            legacy.setdefault(old, set()).add(family)
    problems = []
    for path in _python_files():
        if path.name == "tags.py" and path.parent.parent.name == "protocols":
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        rel = path.relative_to(ROOT)
        for line, value in _literals(tree):
            if value in current:
                problems.append(f"{rel}:{line}: {value!r} (import it from "
                                f"fedsec.protocols.{current[value]}.tags)")
        for line, value in _tag_positions(tree):
            if value in legacy:
                problems.append(f"{rel}:{line}: {value!r} is a tag of fedsec 0.1.0 "
                                f"(today: fedsec.protocols.{sorted(legacy[value])[0]}.tags)")
    assert not problems, "tags typed outside their family's tags.py:\n" + "\n".join(problems)


@pytest.mark.parametrize("family", FAMILIES)
def test_protocols_declare_their_family_renames(family: str) -> None:
    from fedsec.registry import protocols

    module = _tags_module(family)
    members = [c for c in protocols.classes().values()
               if c.__module__.startswith(f"fedsec.protocols.{family}.")]
    assert members
    for cls in members:
        assert dict(cls.renamed_tags) == module.RENAMED


def test_the_scan_finds_a_typed_tag() -> None:
    typed = ".".join(("fedcg", "kernel_block"))  # not a literal here
    tree = ast.parse(f'net.send("a", "b", "{typed}", x)\nm.tag == "partial_dot"')
    assert [v for _, v in _tag_positions(tree)] == [typed, "partial_dot"]
