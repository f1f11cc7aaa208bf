"""The units of an audit's grid: an attack as the scenario names it, one cell (one run), and
the values its axes take (a sweep's list or range, the seeds)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The largest sweep of one parameter an audit accepts.
MAX_SWEEP_VALUES = 10_000


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


def seed_list(audit: Mapping[str, Any], problems: list[str]) -> list[int]:
    """The scenario's seeds: ``seeds`` (a list), or ``repetitions = N`` (seeds 0 to N-1)."""
    if "seeds" in audit:
        seeds = audit["seeds"]
        if (not isinstance(seeds, list) or not seeds
                or not all(isinstance(s, int) and s >= 0 for s in seeds)):
            problems.append(f"audit.seeds must be a non-empty list of ints >= 0; got {seeds!r}")
            return [0]
        return list(seeds)
    repetitions = audit.get("repetitions", 1)
    if not isinstance(repetitions, int) or repetitions < 1:
        problems.append(f"audit.repetitions must be an int >= 1; got {repetitions!r}")
        return [0]
    return list(range(repetitions))


def sweep_values(name: str, value: Any, problems: list[str]) -> list[Any]:
    """A sweep: a list, or a range table {start, stop, step} / {start, stop, num}."""
    if isinstance(value, list):
        if not value:
            problems.append(f"sweep.{name} is an empty list")
        return value
    if isinstance(value, Mapping) and {"start", "stop"} <= set(value):
        start, stop = value["start"], value["stop"]
        bounds = [start, stop, value.get("step", 1), value.get("num", 1)]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                   and math.isfinite(v) for v in bounds):
            problems.append(f"sweep.{name} range {dict(value)} needs finite numbers for start, "
                            "stop and step or num")
            return []
        if "num" in value:
            num = int(value["num"])
            if num < 1:
                problems.append(f"sweep.{name} asks for {num} values; num must be at least 1")
                return []
            if num > MAX_SWEEP_VALUES:
                problems.append(f"sweep.{name} asks for {num:,} values; at most "
                                f"{MAX_SWEEP_VALUES:,} per parameter")
                return []
            points = np.linspace(start, stop, num)
            return [int(p) if isinstance(start, int) and isinstance(stop, int) else float(p)
                    for p in points]
        step = value.get("step", 1)
        if step and (stop - start) / step + 1 > MAX_SWEEP_VALUES:
            problems.append(f"sweep.{name} range {dict(value)} has more than "
                            f"{MAX_SWEEP_VALUES:,} values")
            return []
        values, current = [], start
        while (step > 0 and current <= stop) or (step < 0 and current >= stop):
            values.append(current)
            current += step
        if not values:
            problems.append(f"sweep.{name} range {dict(value)} is empty")
        return values
    return [value]
