"""The units of an audit's grid: an attack as the scenario names it, and one cell (one run)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AttackSpec:
    """One attack, its threat models, scorer and parameters."""

    name: str
    threats: tuple[str, ...]
    scorer: str = "reconstruction-error"
    params: Mapping[str, Any] = field(default_factory=dict)
    scorer_params: Mapping[str, Any] = field(default_factory=dict)
    show: int = 0
    """Reconstructed rows the cells keep for the report (0: none, the default)."""

    default_scorer: str = "reconstruction-error"

    @property
    def label(self) -> str:
        """Name, parameters and any non-default scorer, e.g. ``pinv-reconstruction/epsilon-dr``."""
        text = self.name
        if self.params:
            text += "[" + ",".join(f"{k}={v}" for k, v in self.params.items()) + "]"
        if self.scorer != self.default_scorer:
            text += f"/{self.scorer}"
        return text


@dataclass(frozen=True)
class Cell:
    """One run of the grid and the attacks on it."""

    protocol: str
    backend: str
    defense: tuple[str, Mapping[str, Any]] | None
    params: Mapping[str, Any]
    seed: int
    dataset: str = ""
    #: Everything scenario-wide that changes the cell's result (the dataset spec, partition,
    #: backend parameters, scaling, test size, attacks and scorers): part of the id, so a
    #: changed scenario never reuses a finished cell of another.
    context: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def config_dict(self) -> dict[str, Any]:
        """JSON-able description (what makes the cell unique)."""
        return {"protocol": self.protocol, "backend": self.backend, "dataset": self.dataset,
                "defense": None if self.defense is None else
                {"name": self.defense[0], "params": dict(self.defense[1])},
                "params": dict(self.params), "seed": self.seed}

    @property
    def id(self) -> str:
        """A stable short id: a hash of the configuration and the scenario's context."""
        text = json.dumps({**self.config_dict(), "context": dict(self.context)}, sort_keys=True,
                          default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def configuration(self) -> str:
        """A readable label of everything but the seed (the unit a report aggregates)."""
        parts = [self.protocol, self.dataset, self.backend] if self.dataset else [
            self.protocol, self.backend]
        if self.defense is not None:
            opts = ",".join(f"{k}={v}" for k, v in self.defense[1].items())
            parts.append(self.defense[0] + (f":{opts}" if opts else ""))
        else:
            parts.append("no defence")
        parts += [f"{k}={v}" for k, v in self.params.items()]
        return " | ".join(parts)
