"""fedsec: audit the privacy of federated-learning protocols.

Run a protocol among simulated parties, record every message in a
transcript, and attack what one adversary saw. Importing this package loads
no component; components are loaded on first use.

In a source checkout the plug-in folders (``protocols/``, ``attacks/``,
``defenses/``) sit beside this package and are installed under its name
(``fedsec.protocols`` ...). An editable install maps those names to the tree
it was made from; so that a second checkout imports its own plug-ins with its
own core, the names are resolved from the folders beside the core that was
imported (:class:`_CheckoutPlugins`), before any installed mapping. An
installed wheel holds them inside the package, and nothing changes.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__version__ = "0.1.0"

__all__ = ["__version__"]

_PLUGIN_FOLDERS = ("protocols", "attacks", "defenses")


class _CheckoutPlugins(importlib.abc.MetaPathFinder):
    """Finds ``fedsec.protocols``, ``fedsec.attacks`` and ``fedsec.defenses`` in the
    checkout this core was imported from (their submodules follow their ``__path__``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        prefix, _, folder = fullname.partition(".")
        if prefix != __name__ or folder not in _PLUGIN_FOLDERS:
            return None
        init = self.root / folder / "__init__.py"
        return importlib.util.spec_from_file_location(
            fullname, init, submodule_search_locations=[str(init.parent)])


def _checkout_root() -> Path | None:
    """The source checkout this package was imported from, or None (an installed wheel)."""
    here = Path(__file__).resolve().parent
    root = here.parent
    if any((here / folder).is_dir() for folder in _PLUGIN_FOLDERS):
        return None  # installed: the plug-ins are inside the package
    if not (root / "pyproject.toml").is_file() or not all(
            (root / folder / "__init__.py").is_file() for folder in _PLUGIN_FOLDERS):
        return None
    return root


def _install_finder() -> None:
    root = _checkout_root()
    if root is None or any(isinstance(f, _CheckoutPlugins) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _CheckoutPlugins(root))


_install_finder()
