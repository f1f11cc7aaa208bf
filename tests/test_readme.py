"""The README's Python examples run as written (in order, in one namespace)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fedsec import registry

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _blocks() -> list[str]:
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def test_the_readme_has_python_examples() -> None:
    blocks = _blocks()
    assert len(blocks) >= 5
    assert any("view.open(" in b and "view.can_open(" in b for b in blocks)


def test_every_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    before = {kind: set(registry.names(kind)) for kind in registry.KINDS}
    namespace: dict[str, object] = {"__name__": "readme"}
    try:
        for number, block in enumerate(_blocks(), 1):
            # dont_inherit: run as a user's script would, without this file's __future__ imports
            code = compile(block, f"README.md python block {number}", "exec", dont_inherit=True)
            exec(code, namespace)  # noqa: S102 - the README's own examples
    finally:
        for kind in registry.KINDS:
            for name in set(registry.names(kind)) - before[kind]:
                registry.unregister(kind, name)
    printed = capsys.readouterr().out.splitlines()
    # the extension example: the server reads every party's sums exactly, and the
    # rounding defence leaves it only part of them
    undefended, defended = (float(line.split()[-1]) for line in printed[-2:])
    assert undefended == 1.0
    assert 0.0 < defended < 1.0
