"""The plug-in folders install under fedsec's name, completely; a user's modules shadow nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"fedsec": "fedsec", "protocols": "fedsec.protocols", "attacks": "fedsec.attacks",
           "defenses": "fedsec.defenses"}


def _packages_on_disk() -> set[str]:
    found = set()
    for folder, name in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *rel)))
    return found


def test_pyproject_lists_every_package_and_maps_the_plugin_folders() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    assert set(setuptools["packages"]) == _packages_on_disk()
    assert setuptools["package-dir"] == {v: k for k, v in FOLDERS.items() if k != "fedsec"}
    assert (ROOT / "fedsec" / "py.typed").is_file()


def test_no_source_module_is_named_like_a_test() -> None:
    """pytest pointed at a package folder would collect it (and fail on its imports)."""
    named = sorted(str(path.relative_to(ROOT)) for folder in FOLDERS
                   for path in (ROOT / folder).rglob("*.py")
                   if path.name.startswith("test_") or path.name.endswith("_test.py"))
    assert named == []


def test_a_second_checkout_imports_its_own_plugins(tmp_path: Path) -> None:
    """With the editable install made from this tree, a copy run from its own folder imports
    its own core and its own plug-ins, never this tree's."""
    clone = tmp_path / "clone"
    (clone / "fedsec").mkdir(parents=True)
    (clone / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (clone / "fedsec" / "__init__.py").write_text((ROOT / "fedsec" / "__init__.py").read_text())
    for folder in ("protocols", "attacks", "defenses"):
        (clone / folder / "fedcg").mkdir(parents=True)
        (clone / folder / "__init__.py").write_text("")
        (clone / folder / "fedcg" / "__init__.py").write_text(f"WHERE = {folder!r}\n")
    probe = ("import fedsec, fedsec.protocols.fedcg as p, fedsec.attacks.fedcg as a, "
             "fedsec.defenses.fedcg as d; print(fedsec.__file__); print(p.__file__); "
             "print(a.__file__); print(d.__file__)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=clone, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    paths = [Path(line).resolve() for line in done.stdout.split()]
    assert all(path.is_relative_to(clone.resolve()) for path in paths), paths


def test_mypy_checks_every_plugin_folder_under_its_installed_name() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    base = ROOT / config["mypy_path"]
    for folder, name in FOLDERS.items():
        if folder == "fedsec":
            assert "fedsec" in config["files"]
            continue
        link = base.joinpath(*name.split("."))
        assert link.resolve() == (ROOT / folder).resolve(), f"{link} must link to {folder}/"
        assert str(link.relative_to(ROOT)) in config["files"]


def test_modules_named_like_the_folders_shadow_nothing(tmp_path: Path) -> None:
    for name in ("protocols", "attacks", "defenses"):
        (tmp_path / f"{name}.py").write_text("raise ImportError('a user module was imported')\n")
    code = ("from fedsec import registry; "
            "print(len(registry.names('protocol')), len(registry.names('attack')), "
            "len(registry.names('defense')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    protocols, attacks, defenses = map(int, done.stdout.split())
    assert protocols >= 7 and attacks >= 7 and defenses >= 5
