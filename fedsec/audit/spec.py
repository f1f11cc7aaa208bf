"""Audit scenarios: parsing, validation as a whole, and expansion into cells.

A scenario is a TOML file::

    [audit]
    name = "quickstart"
    description = "FedCG naive versus secure, attacked by the server"
    protocols = ["fedcg-naive", "fedcg-secure"]
    dataset = "iris"                             # or datasets = ["iris", "wine"]
    partition = "hybrid:cohorts=2,groups=2"     # or a table
    backends = ["plain", "noise", "ckks"]
    seeds = [0, 1]                               # or repetitions = 3 (seeds 0, 1, 2)

    [params]                                     # protocol parameters for every run
    regularization = 1e-3

    [sweep]                                      # protocol parameters to sweep (lists or ranges)
    n_landmarks = [3, 5, 10, 20]                 # or {start = 5, stop = 50, step = 15}

    [[defenses]]                                 # one entry per defence to compare with "none"
    name = "random-landmarks"                    # a registered name or "package.module:Class"
    method = ["U", "N"]                          # list values sweep

    [[attacks]]
    name = "multilateration"
    as = ["server"]                              # a party, "a,b" or "eavesdropper:a->b"
    scorer = "point-recovery"
    params = { knowledge = "auto" }

Every problem is collected and reported at once: unknown names (with the
valid ones), bad parameters, attacks that apply to none of the protocols and
why, backends lacking operations a protocol needs, defences that do not apply,
threat models naming unknown parties.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import numpy as np

from fedsec import registry
from fedsec.errors import FedsecError, ValidationError
from fedsec.threat import ThreatModel

AUDIT_KEYS = {"name", "description", "protocols", "protocol", "dataset", "datasets", "partition",
              "backends",
              "backend", "seeds", "repetitions", "scaling", "test_size", "backend_params"}
TOP_KEYS = {"audit", "params", "sweep", "defenses", "attacks"}


class AuditSpecError(ValidationError):
    """A scenario with problems; ``problems`` lists every one."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{source} has {len(problems)} problem(s):\n{lines}")


@dataclass(frozen=True)
class AttackSpec:
    """One attack, its threat models, scorer and parameters."""

    name: str
    threats: tuple[str, ...]
    scorer: str = "reconstruction-error"
    params: Mapping[str, Any] = field(default_factory=dict)
    scorer_params: Mapping[str, Any] = field(default_factory=dict)

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

    def config_dict(self) -> dict[str, Any]:
        """JSON-able description (what makes the cell unique)."""
        return {"protocol": self.protocol, "backend": self.backend, "dataset": self.dataset,
                "defense": None if self.defense is None else
                {"name": self.defense[0], "params": dict(self.defense[1])},
                "params": dict(self.params), "seed": self.seed}

    @property
    def id(self) -> str:
        """A stable short id: a hash of the configuration."""
        text = json.dumps(self.config_dict(), sort_keys=True, default=str)
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


@dataclass(frozen=True)
class AuditSpec:
    """A validated scenario."""

    name: str
    description: str
    source: str
    raw: Mapping[str, Any]
    protocols: tuple[str, ...]
    datasets: tuple[str, ...]
    partition: str | Mapping[str, Any] | None
    backends: tuple[str, ...]
    backend_params: Mapping[str, Any]
    seeds: tuple[int, ...]
    scaling: str
    test_size: float | None
    params: Mapping[str, Any]
    sweep: Mapping[str, tuple[Any, ...]]
    defenses: tuple[tuple[str, Mapping[str, Any]], ...]
    attacks: tuple[AttackSpec, ...]
    base_dir: str = "."

    def cells(self) -> list[Cell]:
        """The grid: protocols × datasets × backends × (none + defences) × sweep × seeds."""
        keys = list(self.sweep)
        combos = [dict(zip(keys, values, strict=True))
                  for values in itertools.product(*(self.sweep[k] for k in keys))] or [{}]
        out = []
        several = len(self.datasets) > 1
        for protocol, dataset, backend, defense, combo, seed in itertools.product(
                self.protocols, self.datasets, self.backends, [None, *self.defenses], combos,
                self.seeds):
            if defense is not None:
                cls = registry.get("defense", defense[0])
                if cls.protocols and _protocol_name(protocol) not in cls.protocols:
                    continue
            out.append(Cell(protocol, backend, defense, {**self.params, **combo}, seed,
                            dataset if several else ""))
        return out


def load_spec(path: str | os.PathLike[str]) -> AuditSpec:
    """Read and validate a scenario file; raises :class:`AuditSpecError` listing every problem."""
    path = Path(path)
    if not path.is_file():
        raise ValidationError(f"No audit scenario at {str(path)!r}.")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ValidationError(f"{path}: invalid TOML ({error}).") from None
    directory = str(path.resolve().parent)
    if directory not in sys.path:  # user classes named "module:Class" may live beside the scenario
        sys.path.insert(0, directory)
    return parse_spec(raw, source=str(path), base_dir=directory)


def parse_spec(raw: Mapping[str, Any], *, source: str = "scenario",
               base_dir: str = ".") -> AuditSpec:
    """Validate a parsed scenario as a whole."""
    problems: list[str] = []
    for key in sorted(set(raw) - TOP_KEYS):
        problems.append(f"unknown section [{key}]; valid sections: {', '.join(sorted(TOP_KEYS))}")
    audit = dict(raw.get("audit", {}))
    for key in sorted(set(audit) - AUDIT_KEYS):
        problems.append(f"unknown key audit.{key}; valid keys: {', '.join(sorted(AUDIT_KEYS))}")
    protocols = _names(audit, "protocols", "protocol", "protocol", problems)
    backends = _names(audit, "backends", "backend", "backend", problems) or ["plain"]
    datasets = _names(audit, "datasets", "dataset", "dataset", problems)
    for dataset in datasets:
        _check_dataset(dataset, problems)
    seeds = _seeds(audit, problems)
    params = dict(raw.get("params", {}))
    sweep = {k: _values(k, v, problems) for k, v in dict(raw.get("sweep", {})).items()}
    defenses = _defenses(raw.get("defenses", []), problems)
    attacks = _attacks(raw.get("attacks", []), problems)
    classes = {p: _get("protocol", p, problems) for p in protocols}
    for backend in backends:
        _get("backend", backend, problems)
    _check_combinations(classes, backends, defenses, attacks, params, sweep, problems)
    for dataset in datasets:
        _check_threats(classes, dataset, audit.get("partition"), attacks, problems)
    if not attacks:
        problems.append("no [[attacks]]: an audit needs at least one attack to score leakage")
    if problems:
        raise AuditSpecError(source, problems)
    return AuditSpec(
        name=str(audit.get("name", Path(source).stem)),
        description=str(audit.get("description", "")), source=source, raw=raw,
        protocols=tuple(protocols), datasets=tuple(datasets), partition=audit.get("partition"),
        backends=tuple(backends), backend_params=dict(audit.get("backend_params", {})),
        seeds=tuple(seeds), scaling=str(audit.get("scaling", "minmax")),
        test_size=audit.get("test_size"), params=params,
        sweep={k: tuple(v) for k, v in sweep.items()}, defenses=tuple(defenses),
        attacks=tuple(attacks), base_dir=base_dir,
    )


def _names(audit: Mapping[str, Any], plural: str, singular: str, kind: str,
           problems: list[str]) -> list[str]:
    value = audit.get(plural, audit.get(singular))
    if value is None:
        if kind in ("protocol", "dataset"):
            problems.append(f"audit.{plural} is missing: name at least one {kind}")
        return []
    values = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(v, str) for v in values):
        problems.append(f"audit.{plural} must be names (strings); got {value!r}")
        return []
    return values


def _get(kind: str, name: str, problems: list[str]) -> Any:
    try:
        return registry.get(kind, name)
    except FedsecError as error:
        problems.append(str(error))
        return None


def _check_dataset(dataset: Any, problems: list[str]) -> None:
    from fedsec.data import dataset_names, load_spec

    if dataset is None:
        problems.append("audit.dataset is missing")
    elif str(dataset).endswith(".csv"):
        return
    elif str(dataset).partition(":")[0].strip() not in dataset_names():
        problems.append(f"Unknown dataset {dataset!r}. Valid dataset names: "
                        f"{', '.join(dataset_names())} (or a .csv path).")
    elif ":" in str(dataset):
        try:
            load_spec(str(dataset))
        except FedsecError as error:
            problems.append(str(error))


def _seeds(audit: Mapping[str, Any], problems: list[str]) -> list[int]:
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


def _values(name: str, value: Any, problems: list[str]) -> list[Any]:
    """A sweep: a list, or a range table {start, stop, step} / {start, stop, num}."""
    if isinstance(value, list):
        if not value:
            problems.append(f"sweep.{name} is an empty list")
        return value
    if isinstance(value, Mapping) and {"start", "stop"} <= set(value):
        start, stop = value["start"], value["stop"]
        if "num" in value:
            points = np.linspace(start, stop, int(value["num"]))
            return [int(p) if isinstance(start, int) and isinstance(stop, int) else float(p)
                    for p in points]
        step = value.get("step", 1)
        values, current = [], start
        while (step > 0 and current <= stop) or (step < 0 and current >= stop):
            values.append(current)
            current += step
        if not values:
            problems.append(f"sweep.{name} range {dict(value)} is empty")
        return values
    return [value]


def _defenses(entries: Iterable[Any], problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or "name" not in entry:
            problems.append(f"defenses[{i}] needs a name")
            continue
        entry = dict(entry)
        name = entry.pop("name")
        if _get("defense", name, problems) is None:
            continue
        keys = list(entry)
        for values in itertools.product(*([v] if not isinstance(v, list) else v
                                          for v in entry.values())):
            out.append((name, dict(zip(keys, values, strict=True))))
    return out


def _attacks(entries: Iterable[Any], problems: list[str]) -> list[AttackSpec]:
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or "name" not in entry or "as" not in entry:
            problems.append(f"attacks[{i}] needs a name and 'as' (the threat models)")
            continue
        unknown = set(entry) - {"name", "as", "scorer", "params", "scorer_params"}
        if unknown:
            problems.append(f"attacks[{i}] has unknown keys {sorted(unknown)}; valid: name, as, "
                            "scorer, params, scorer_params")
        threats = [entry["as"]] if isinstance(entry["as"], str) else list(entry["as"])
        default = _get_quiet("attack", entry["name"])
        default_scorer = default.default_scorer if default else "reconstruction-error"
        spec = AttackSpec(name=entry["name"], threats=tuple(threats),
                          scorer=entry.get("scorer", default_scorer),
                          default_scorer=default_scorer,
                          params=dict(entry.get("params", {})),
                          scorer_params=dict(entry.get("scorer_params", {})))
        cls = _get("attack", spec.name, problems)
        scorer = _get("scorer", spec.scorer, problems)
        for component, params in ((cls, spec.params), (scorer, spec.scorer_params)):
            if component is not None:
                try:
                    component(**params)
                except FedsecError as error:
                    problems.append(f"attacks[{i}] ({spec.name}): {error}")
        for threat in threats:
            try:
                ThreatModel.parse(threat)
            except FedsecError as error:
                problems.append(f"attacks[{i}] ({spec.name}): {error}")
        out.append(spec)
    return out


def _check_combinations(classes: Mapping[str, Any], backends: list[str],
                        defenses: list[tuple[str, dict[str, Any]]], attacks: list[AttackSpec],
                        params: Mapping[str, Any], sweep: Mapping[str, list[Any]],
                        problems: list[str]) -> None:
    for name, cls in classes.items():
        if cls is None:
            continue
        for backend in backends:
            bcls = _get_quiet("backend", backend)
            if bcls is not None:
                try:
                    cls.check_backend(bcls)
                except FedsecError as error:
                    problems.append(str(error))
        for combo in itertools.product(*sweep.values()) if sweep else [()]:
            values = {**params, **dict(zip(sweep, combo, strict=True))}
            try:
                cls(**values)
            except FedsecError as error:
                problems.append(f"protocol {name!r} with {values}: {error}")
                break
    for defense, options in defenses:
        dcls = _get_quiet("defense", defense)
        if dcls is None:
            continue
        try:
            dcls(**options)
        except FedsecError as error:
            problems.append(str(error))
        names = {cls.name for cls in classes.values() if cls is not None}
        if dcls.protocols and not (dcls.protocols & names):
            problems.append(f"defence {defense!r} applies to none of the protocols "
                            f"({', '.join(sorted(names))}); it applies to "
                            f"{', '.join(sorted(dcls.protocols))}")
    for attack in attacks:
        acls = _get_quiet("attack", attack.name)
        if acls is None:
            continue
        reasons = [_static_reason(acls, cls) for cls in classes.values() if cls is not None]
        if reasons and all(reasons):
            problems.append(f"attack {attack.name!r} applies to none of the protocols: "
                            + "; ".join(r for r in reasons if r))


def _static_reason(attack_cls: Any, protocol_cls: Any) -> str | None:
    """Why an attack cannot apply to a protocol's transcript, from declared tags."""
    exposes = set(protocol_cls.exposes)
    needs_all = set(attack_cls.needs_tags)
    needs_any = set(getattr(attack_cls, "needs_any_tags", ()))
    if needs_all - exposes:
        return (f"{protocol_cls.name} exposes no {', '.join(sorted(needs_all - exposes))} "
                f"(it exposes {', '.join(sorted(exposes)) or 'nothing'})")
    if needs_any and not needs_any & exposes:
        return f"{protocol_cls.name} exposes none of {', '.join(sorted(needs_any))}"
    return None


def _check_threats(classes: Mapping[str, Any], dataset: Any, partition: Any,
                   attacks: list[AttackSpec], problems: list[str]) -> None:
    """Threat models must name parties that exist in the runs' partitions."""
    if dataset is None or not attacks:
        return
    from fedsec.data import load_spec
    from fedsec.partition import parse_partition
    from fedsec.seeding import generator

    try:
        data = load_spec(str(dataset))
    except FedsecError:
        return
    for name, cls in classes.items():
        if cls is None:
            continue
        try:
            spec = parse_partition(partition or cls.default_partition)
            layout = spec.apply(n_samples=data.n_samples, feature_groups=data.feature_groups,
                                y=data.y if data.task != "regression" else None,
                                cohorts=data.cohorts, rng=generator(0, "partition"),
                                coordinators=cls.coordinators)
        except FedsecError as error:
            problems.append(f"protocol {name!r}: partition: {error}")
            continue
        for attack in attacks:
            for threat in attack.threats:
                try:
                    ThreatModel.parse(threat).check_parties(layout.parties)
                except FedsecError as error:
                    problems.append(f"attacks ({attack.name}) as {threat!r} on {name}: {error}")


def _get_quiet(kind: str, name: str) -> Any:
    try:
        return registry.get(kind, name)
    except FedsecError:
        return None


def _protocol_name(name: str) -> str:
    return registry.get("protocol", name).name
