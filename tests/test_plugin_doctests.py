"""The docstring examples of the plug-in packages (installed as fedsec.protocols, ...) run.

The core's examples run through ``--doctest-modules`` over ``fedsec/``; the plug-in
folders sit elsewhere in the checkout but are imported under fedsec's name, so
their examples are collected here from the installed modules.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("fedsec.protocols", "fedsec.attacks", "fedsec.defenses")


def _modules() -> list[str]:
    names = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names.append(package_name)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, f"{package_name}.")]
    return sorted(names)


def test_the_plugin_packages_have_examples() -> None:
    finder = doctest.DocTestFinder()
    total = sum(len(t.examples) for name in _modules()
                for t in finder.find(importlib.import_module(name)))
    assert total >= 20


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(module):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
