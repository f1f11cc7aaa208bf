"""The index of built-in components matches the code, and start-up imports only what it uses.

The structural tests run a fresh interpreter and read its ``sys.modules``: what an import
costs is measured in tests/benchmarks/startup.py, not here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fedsec import registry
from fedsec.builtin_index import COMPONENTS, EXTRACTOR_MODULES
from fedsec.errors import UnknownNameError
from fedsec.index_build import collect, index_path, render
from fedsec.plugin_registry import qualname

#: Libraries a command must not import unless it uses them.
HEAVY = ("sklearn", "scipy", "matplotlib", "pandas", "tenseal", "phe", "cvxpy", "torch")


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules} & set(HEAVY))


def test_the_index_is_current() -> None:
    assert render(*collect()) == index_path().read_text(encoding="utf-8"), (
        "fedsec/builtin_index.py is stale: run python -m fedsec.index_build")


def test_every_indexed_name_resolves_to_its_class() -> None:
    for kind, table in COMPONENTS.items():
        for name, (path, summary) in table.items():
            cls = registry.get(kind, name)
            assert qualname(cls) == path and cls.summary == summary
    assert set(EXTRACTOR_MODULES) <= set(COMPONENTS["protocol"])


def test_help_and_importing_the_cli_load_no_heavy_library() -> None:
    imported = _modules_after("import fedsec.cli.main")
    assert _heavy(imported) == []
    assert "numpy" not in imported
    helped = _modules_after(
        "from fedsec.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
        "    pass")
    assert _heavy(helped) == []
    assert "numpy" not in helped


def test_running_secure_sum_on_iris_loads_no_heavy_library_nor_other_components(
        tmp_path) -> None:
    modules = _modules_after(
        "from fedsec.cli.main import main\n"
        f"main(['run', 'secure-sum', '--dataset', 'iris', '--out', {str(tmp_path / 'run')!r}])")
    assert _heavy(modules) == []
    components = {m for m in modules if m.startswith(("fedsec.protocols.", "fedsec.attacks.",
                                                      "fedsec.defenses.", "fedsec.scoring."))}
    assert components == {"fedsec.protocols.secure_sum"}


def test_names_import_no_component_and_a_lookup_imports_only_its_module() -> None:
    modules = _modules_after(
        "from fedsec import registry\n"
        "names = [registry.names(kind) for kind in registry.KINDS]\n"
        "import sys\n"
        "assert not [m for m in sys.modules if m.startswith('fedsec.protocols.')]\n"
        "registry.get('protocol', 'secure-sum')")
    assert {m for m in modules if m.startswith("fedsec.protocols.")} == {
        "fedsec.protocols.secure_sum"}


def test_unknown_names_suggest_close_matches_from_the_index() -> None:
    with pytest.raises(UnknownNameError, match=r"Did you mean 'secure-sum'\?.*Valid protocol"):
        registry.get("protocol", "secure-summ")
