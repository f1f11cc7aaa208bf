"""The base every plug-in shares: a registered name, a summary, its paper, parameters."""

from __future__ import annotations

from typing import Any, ClassVar

from fedsec.params import NoParams, build_params, params_dict


class Component:
    """Shared by every plug-in: a registered name, a summary, the paper, parameters."""

    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    Params: ClassVar[type] = NoParams

    def __init__(self, **params: Any) -> None:
        self.params = build_params(self.Params, params, owner=f"{self.kind} {self.name!r}")

    @classmethod
    def capabilities(cls) -> dict[str, Any]:
        """What this component declares, as JSON-able data."""
        return {}

    def describe(self) -> dict[str, Any]:
        """Name and parameter values, for results and reports."""
        return {"name": self.name, "params": params_dict(self.params)}
