"""The base every plug-in shares: a registered name, a summary, its paper, parameters."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from fedsec.params import NoParams, build_params, params_dict


def first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, its lines joined by single spaces.

    Examples
    --------
    >>> first_paragraph('''Two lines
    ...     of summary.
    ...
    ...     Details.''')
    'Two lines of summary.'
    """
    return " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split())


class Component:
    """Shared by every plug-in: a registered name, a summary, the paper, parameters.

    A component's ``summary`` (what ``fedsec describe`` and the listings print) is the first
    paragraph of its class docstring, unless the class sets ``summary`` itself.
    """

    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    Params: ClassVar[type] = NoParams

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "summary" not in cls.__dict__ and cls.__dict__.get("__doc__"):
            cls.summary = first_paragraph(cls.__doc__)

    def __init__(self, **params: Any) -> None:
        self.params = build_params(self.Params, params, owner=f"{self.kind} {self.name!r}")

    @classmethod
    def capabilities(cls) -> dict[str, Any]:
        """What this component declares, as JSON-able data."""
        return {}

    def describe(self) -> dict[str, Any]:
        """Name and parameter values, for results and reports."""
        return {"name": self.name, "params": params_dict(self.params)}
