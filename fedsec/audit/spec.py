"""Audit scenarios: parsing, validation as a whole, and expansion into cells.

A scenario is a TOML file::

    [audit]
    name = "quickstart"
    description = "FedCG naive versus secure, attacked by the server"
    protocols = ["fedcg-naive", "fedcg-secure"]
    dataset = "iris"                             # or datasets = ["iris", "wine"]
    partition = "hybrid:cohorts=2,groups=2"     # or a table
    backends = ["plain", "noise", "ckks"]
    seeds = [0, 1]                               # or repetitions = 3 (seeds 0, 1, 2); not both
    split_seed = 0                               # optional: one split for every seed, or
                                                 # split_file = "paper.json" (test rows)
    secret_seed = 0                              # optional: pins the parties' secrets (to
                                                 # reproduce numbers; drawn at random if absent)

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
    show = 4                                     # optional: keep 4 reconstructed rows for
                                                 # the report (none are kept by default)

    [report]                                     # optional: the metric the sweep and
    metric = "distance_error"                    # defence plots show (default: advantage)

Every problem is collected and reported at once (the message lists the first
:data:`MAX_LISTED`): unknown names (with the valid ones), bad parameters, keys
given twice (``seeds`` and ``repetitions``), attacks that apply to none of the
protocols and why, scorers that cannot read what their attack recovers,
backends lacking operations a protocol needs, defences that do not apply,
threat models naming unknown parties. Every run of the grid is planned
(:func:`fedsec.plan.plan`) exactly as ``fedsec run`` would plan it.

A ``package.module:Class`` component whose top-level module sits beside the scenario is loaded
from that folder explicitly (the folder is appended to the import path, never put first, and a
module there named like an installed or standard one is refused); otherwise it is imported from
the interpreter's import path. A scenario's components are code, run with the user's rights.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fedsec import registry
from fedsec.audit.checks import (
    check_attacks_apply,
    check_dataset,
    check_defenses_apply,
    check_report,
    check_runs,
    check_scorers,
    check_threats,
    lookup,
    split_choice,
)
from fedsec.audit.examples import MAX_SHOW
from fedsec.audit.grid import MAX_SWEEP_VALUES, AttackSpec, Cell, seed_list, sweep_values
from fedsec.errors import FedsecError, ValidationError
from fedsec.plugin_registry import SearchPath
from fedsec.threat import ThreatModel
from fedsec.validation import read_toml

__all__ = ["MAX_SWEEP_VALUES", "AttackSpec", "AuditSpec", "AuditSpecError", "Cell", "load_spec",
           "parse_spec"]

AUDIT_KEYS = {"name", "description", "protocols", "protocol", "dataset", "datasets", "partition",
              "backends",
              "backend", "seeds", "repetitions", "scaling", "test_size", "backend_params",
              "split_file", "split_seed", "secret_seed"}
TOP_KEYS = {"audit", "params", "sweep", "defenses", "attacks", "report"}
#: Keys that say the same thing two ways: a scenario gives one of each pair.
CONFLICTING_KEYS = (("seeds", "repetitions"), ("protocols", "protocol"), ("datasets", "dataset"),
                    ("backends", "backend"))
#: The largest grid an audit accepts (the largest sweep is :data:`MAX_SWEEP_VALUES`).
MAX_CELLS = 100_000
#: The problems an error message lists; ``AuditSpecError.problems`` keeps every one.
MAX_LISTED = 20


class AuditSpecError(ValidationError):
    """A scenario with problems; ``problems`` lists every one, the message the first
    :data:`MAX_LISTED`, one a line, and how many more there are."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        lines = [f"  - {p}" for p in problems[:MAX_LISTED]]
        if len(problems) > MAX_LISTED:
            lines.append(f"  ... and {len(problems) - MAX_LISTED:,} more (fix these and "
                         "validate again)")
        super().__init__(f"{source} has {len(problems):,} problem(s):\n" + "\n".join(lines))


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
    scaling: str | None
    test_size: float | None
    params: Mapping[str, Any]
    sweep: Mapping[str, tuple[Any, ...]]
    defenses: tuple[tuple[str, Mapping[str, Any]], ...]
    attacks: tuple[AttackSpec, ...]
    base_dir: str = "."
    split_file: str | None = None
    """A split file (resolved beside the scenario), and its SHA-256 for the cells' ids."""
    split_sha256: str | None = None
    split_seed: int | None = None
    secret_seed: int | None = None
    """The root of the cells' secret seeds (:mod:`fedsec.audit.secret`): the scenario's
    ``secret_seed``, or, once the engine has drawn or read it, the audit's own."""

    @property
    def search_path(self) -> tuple[str, ...]:
        """Where the scenario's own ``module:Class`` components are looked for first."""
        return (self.base_dir,)

    def cells(self) -> list[Cell]:
        """The grid: protocols × datasets × backends × (none + defences) × sweep × seeds."""
        keys = list(self.sweep)
        combos = [dict(zip(keys, values, strict=True))
                  for values in itertools.product(*(self.sweep[k] for k in keys))] or [{}]
        out = []
        several = len(self.datasets) > 1
        attacks = [{"name": a.name, "threats": list(a.threats), "scorer": a.scorer,
                    "params": dict(a.params), "scorer_params": dict(a.scorer_params),
                    **({"show": a.show} if a.show else {})}  # ids without show unchanged
                   for a in self.attacks]
        shared = {"partition": self.partition, "backend_params": dict(self.backend_params),
                  "scaling": self.scaling, "test_size": self.test_size, "attacks": attacks,
                  **({"split_file": self.split_sha256} if self.split_file else {}),
                  **({"split_seed": self.split_seed} if self.split_seed is not None else {})}
        for protocol, dataset, backend, defense, combo, seed in itertools.product(
                self.protocols, self.datasets, self.backends, [None, *self.defenses], combos,
                self.seeds):
            if defense is not None:
                cls = registry.get("defense", defense[0], search=self.search_path)
                protocol_name = registry.get("protocol", protocol, search=self.search_path).name
                if cls.protocols and protocol_name not in cls.protocols:
                    continue
            out.append(Cell(protocol, backend, defense, {**self.params, **combo}, seed,
                            dataset if several else "", {**shared, "dataset": dataset}))
        return out


def load_spec(path: str | os.PathLike[str]) -> AuditSpec:
    """Read and validate a scenario file; raises :class:`AuditSpecError` listing every problem.

    ``module:Class`` components may live beside the scenario (its folder is searched first).
    """
    path = Path(path)
    raw = read_toml(path, what=str(path), missing=f"No audit scenario at {str(path)!r}.")
    return parse_spec(raw, source=str(path), base_dir=str(path.resolve().parent))


def parse_spec(raw: Mapping[str, Any], *, source: str = "scenario",
               base_dir: str = ".") -> AuditSpec:
    """Validate a parsed scenario as a whole."""
    problems: list[str] = []
    search = (base_dir,)
    for key in sorted(set(raw) - TOP_KEYS):
        problems.append(f"unknown section [{key}]; valid sections: {', '.join(sorted(TOP_KEYS))}")
    audit = dict(raw.get("audit", {}))
    for key in sorted(set(audit) - AUDIT_KEYS):
        problems.append(f"unknown key audit.{key}; valid keys: {', '.join(sorted(AUDIT_KEYS))}")
    for first, second in CONFLICTING_KEYS:
        if audit.get(first) is not None and audit.get(second) is not None:
            problems.append(f"audit.{first} and audit.{second} conflict: give one of them "
                            + ("(seeds lists the seeds; repetitions = N means seeds 0 to N-1)"
                               if first == "seeds" else f"({first} takes a list of names)"))
    protocols = _names(audit, "protocols", "protocol", "protocol", problems)
    backends = _names(audit, "backends", "backend", "backend", problems) or ["plain"]
    datasets = _names(audit, "datasets", "dataset", "dataset", problems)
    for dataset in datasets:
        check_dataset(dataset, problems)
    seeds = seed_list(audit, problems)
    sweep = {k: sweep_values(k, v, problems) for k, v in dict(raw.get("sweep", {})).items()}
    defenses = _defenses(raw.get("defenses", []), search, problems)
    size = math.prod([len(protocols), len(datasets), len(backends), len(defenses) + 1,
                      len(seeds), *(len(v) for v in sweep.values())])
    if size > MAX_CELLS:
        raise AuditSpecError(source, [*problems, f"the grid has {size:,} cells; at most "
                                      f"{MAX_CELLS:,} (split the scenario, or sweep fewer "
                                      "values)"])
    secret_seed = audit.get("secret_seed")
    if secret_seed is not None and (not isinstance(secret_seed, int)
                                    or isinstance(secret_seed, bool) or secret_seed < 0):
        problems.append(f"audit.secret_seed must be a whole number >= 0 (or left out: each "
                        f"audit then draws its own); got {secret_seed!r}")
        secret_seed = None
    scaling = audit.get("scaling")
    if scaling is not None and not isinstance(scaling, str):
        problems.append(f"audit.scaling must be a name (minmax, standard, none); got "
                        f"{scaling!r}")
    attacks = _attacks(raw.get("attacks", []), search, problems)
    classes = {p: cls for p in protocols
               if (cls := lookup("protocol", p, problems, search=search)) is not None}
    backends_found = [b for b in backends
                      if lookup("backend", b, problems, search=search) is not None]
    if isinstance(scaling, str):
        for name, cls in classes.items():
            if scaling not in cls.scalings:
                problems.append(f"protocol {name!r} accepts the scalings "
                                f"{', '.join(cls.scalings)}; got {scaling!r}")
    spec = AuditSpec(
        name=str(audit.get("name", Path(source).stem)),
        description=str(audit.get("description", "")), source=source, raw=raw,
        protocols=tuple(protocols), datasets=tuple(datasets), partition=audit.get("partition"),
        backends=tuple(backends), backend_params=dict(audit.get("backend_params", {})),
        seeds=tuple(seeds), scaling=_optional_str(audit.get("scaling")),
        test_size=audit.get("test_size"), params=dict(raw.get("params", {})),
        sweep={k: tuple(v) for k, v in sweep.items()}, defenses=tuple(defenses),
        attacks=tuple(attacks), base_dir=base_dir, secret_seed=secret_seed,
        **split_choice(audit, base_dir, problems),
    )
    # every run of the grid whose components exist, planned once per configuration
    runnable = replace(spec, protocols=tuple(classes), backends=tuple(backends_found),
                       seeds=(0,), datasets=spec.datasets[:1])
    check_runs(runnable.cells(), partition=spec.partition, backend_params=spec.backend_params,
               search=search, datasets=[d for d in datasets if d], test_size=spec.test_size,
               problems=problems)
    check_defenses_apply(defenses, list(classes.values()), search=search, problems=problems)
    check_attacks_apply(attacks, list(classes.values()), search=search, problems=problems)
    check_scorers(attacks, search=search, problems=problems)
    check_report(raw.get("report"), attacks, search=search, problems=problems)
    for dataset in datasets:
        check_threats(classes, dataset, spec.partition, attacks, problems)
    if not attacks:
        problems.append("no [[attacks]]: an audit needs at least one attack to score leakage")
    if problems:
        raise AuditSpecError(source, problems)
    return spec


def _names(audit: Mapping[str, Any], plural: str, singular: str, kind: str,
           problems: list[str]) -> list[str]:
    value = audit.get(plural, audit.get(singular))
    if value is None:
        if kind in ("protocol", "dataset"):
            problems.append(f"audit.{plural} is missing: name at least one {kind}")
        return []
    if not isinstance(value, (str, list)):
        problems.append(f"audit.{plural} must be a name or a list of names; got {value!r}")
        return []
    values = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(v, str) for v in values):
        problems.append(f"audit.{plural} must be names (strings); got {value!r}")
        return []
    return values


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _defenses(entries: Iterable[Any], search: SearchPath,
              problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or "name" not in entry:
            problems.append(f"defenses[{i}] needs a name")
            continue
        entry = dict(entry)
        name = entry.pop("name")
        if lookup("defense", name, problems, search=search) is None:
            continue
        keys = list(entry)
        for values in itertools.product(*([v] if not isinstance(v, list) else v
                                          for v in entry.values())):
            out.append((name, dict(zip(keys, values, strict=True))))
    return out


def _attacks(entries: Iterable[Any], search: SearchPath, problems: list[str]) -> list[AttackSpec]:
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or "name" not in entry or "as" not in entry:
            problems.append(f"attacks[{i}] needs a name and 'as' (the threat models)")
            continue
        unknown = set(entry) - {"name", "as", "scorer", "params", "scorer_params", "show"}
        if unknown:
            problems.append(f"attacks[{i}] has unknown keys {sorted(unknown)}; valid: name, as, "
                            "scorer, params, scorer_params, show")
        show = entry.get("show", 0)
        if isinstance(show, bool) or not isinstance(show, int) or not 0 <= show <= MAX_SHOW:
            problems.append(f"attacks[{i}] ({entry['name']}): show = {show!r} must be a whole "
                            f"number of reconstructed rows to keep, 0 to {MAX_SHOW}")
            show = 0
        threats = [entry["as"]] if isinstance(entry["as"], str) else list(entry["as"])
        cls = lookup("attack", entry["name"], problems, search=search)
        default_scorer = cls.default_scorer if cls else "reconstruction-error"
        spec = AttackSpec(name=entry["name"], threats=tuple(threats),
                          scorer=entry.get("scorer", default_scorer),
                          default_scorer=default_scorer,
                          params=dict(entry.get("params", {})),
                          scorer_params=dict(entry.get("scorer_params", {})), show=show)
        scorer = lookup("scorer", spec.scorer, problems, search=search)
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
