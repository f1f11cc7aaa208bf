"""Run one cell of an audit: the protocol, then every attack as every threat model."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from fedsec import registry
from fedsec.audit.examples import examples
from fedsec.audit.secret import cell_secret
from fedsec.audit.spec import AttackSpec, AuditSpec, Cell
from fedsec.convergence import of_attack
from fedsec.errors import FedsecError
from fedsec.plugin_registry import SearchPath
from fedsec.results import versions
from fedsec.runner import RunConfig, RunResult, run
from fedsec.threads import limited_threads
from fedsec.views import build_view

CELL_SCHEMA_VERSION = "2"
"""2: cells record the run's ``privacy`` and an agreement verdict that is null where no
agreement is claimed; a cell stored under 1 is stale and runs again."""
#: Statuses a stored cell records.
CELL_STATUSES = ("ok", "error")
#: Input files larger than this are fingerprinted by size and time, not read whole.
_HASHED_BYTES = 1 << 30


def run_cell(spec: AuditSpec, cell: Cell, *, command: str = "") -> dict[str, Any]:
    """The JSON-able result of one cell; failures are recorded, never raised.

    Reconstructed values are not stored: only the scorers' summaries and the attacks' own
    metadata, and the few rows an ``[[attacks]]`` entry asks for with ``show``
    (:mod:`fedsec.audit.examples`). The linear-algebra libraries run with one thread meanwhile
    (:func:`fedsec.threads.limited_threads`).
    """
    with limited_threads():
        return _run_cell(spec, cell, command=command)


def cell_base(spec: AuditSpec, cell: Cell, command: str) -> dict[str, Any]:
    """What every result of ``cell`` records, whatever happened to its run."""
    return {"schema_version": CELL_SCHEMA_VERSION, "cell": cell.id,
            "configuration": cell.configuration, "config": cell.config_dict(),
            "dataset": cell.dataset or spec.datasets[0], "command": command}


def failed_cell(spec: AuditSpec, cell: Cell, command: str, error: str,
                seconds: float = 0.0) -> dict[str, Any]:
    """The result of a cell that could not run (``error`` says why)."""
    return {**cell_base(spec, cell, command), "status": "error", "error": error,
            "seconds": seconds}


def run_config(spec: AuditSpec, cell: Cell) -> RunConfig:
    """The run one cell of ``spec`` makes (its secret seed from the audit's,
    :func:`~fedsec.audit.secret.cell_secret`; drawn per run while the audit has none)."""
    return RunConfig(protocol=cell.protocol, dataset=cell.dataset or spec.datasets[0],
                     partition=spec.partition,
                     backend=cell.backend, backend_params=dict(spec.backend_params),
                     defenses=[cell.defense] if cell.defense else [], params=dict(cell.params),
                     seed=cell.seed, test_size=spec.test_size, scaling=spec.scaling,
                     secret_seed=(None if spec.secret_seed is None
                                  else cell_secret(spec.secret_seed, cell.seed)),
                     split_file=spec.split_file, split_seed=spec.split_seed,
                     search_path=spec.search_path)


def _run_cell(spec: AuditSpec, cell: Cell, *, command: str) -> dict[str, Any]:
    started = time.perf_counter()
    base = cell_base(spec, cell, command)
    try:
        result = run(run_config(spec, cell))
    except FedsecError as error:
        return {**base, "status": "error", "error": f"{type(error).__name__}: {error}",
                "seconds": time.perf_counter() - started}
    except Exception as error:  # a crash in a component must not stop the audit
        return {**base, "status": "error", "error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc(), "seconds": time.perf_counter() - started}
    record = result.record
    attacks = [_attack(spec_attack.label, threat, spec_attack, result, spec.search_path)
               for spec_attack in spec.attacks for threat in spec_attack.threats]
    return {**base, "status": "ok",
            "metrics": _jsonable(dict(record.federated_metrics)),
            "reference_metrics": _jsonable(dict(record.centralized_metrics)),
            "agrees_with_reference": record.comparison.verdict,  # None: none claimed
            "privacy": _jsonable(record.privacy),
            "cost": _jsonable(dict(record.total_cost)), "versions": dict(record.versions),
            "backend": dict(record.backend), "attacks": attacks,
            "seconds": time.perf_counter() - started}


def _attack(name: str, threat: str, spec_attack: AttackSpec, result: RunResult,
            search: SearchPath) -> dict[str, Any]:
    entry: dict[str, Any] = {"attack": name, "threat": threat, "scorer": spec_attack.scorer,
                             "params": dict(spec_attack.params)}
    started = time.perf_counter()
    try:
        view = build_view(result.transcript, threat, result.private, run_seed=result.record.seed)
        attack = registry.create("attack", spec_attack.name, dict(spec_attack.params),
                                 search=search)
        reason = attack.not_applicable(view)
        if reason is not None:
            return {**entry, "status": "not applicable", "reason": reason}
        reconstruction = attack.run(view)
        scorer = registry.create("scorer", spec_attack.scorer, dict(spec_attack.scorer_params),
                                 search=search)
        scores = scorer.score(reconstruction, result.private)
        convergence = of_attack(reconstruction.info, type(attack).closed_form)
    except FedsecError as error:
        return {**entry, "status": "not applicable", "reason": str(error)}
    except Exception as error:
        return {**entry, "status": "error", "error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc()}
    entry = {**entry, "status": "ok",
             "scores": _jsonable({k: v for k, v in scores.items() if k != "per_target"}),
             "targets": sorted(reconstruction.estimates),
             "info": _jsonable(dict(reconstruction.info)),
             "convergence": _jsonable(convergence),
             "seconds": time.perf_counter() - started}
    if spec_attack.show:  # only at the scenario's request: reconstructed records
        shown = examples(reconstruction, result.private, result.record.dataset.features,
                         spec_attack.show)
        if shown is not None:
            entry["examples"] = shown
    return entry


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def cell_key(spec: AuditSpec, cell: Cell, digests: dict[str, str] | None = None) -> str:
    """What a stored result must have been computed from to be reused: the cell's complete
    effective configuration (every field of its run and every attack, scorer and their
    parameters), the content of every input file it names (a CSV dataset, a split or
    records file: any string of the configuration naming a file, beside the scenario or
    from the working folder), and the versions of fedsec and the libraries that shape
    results (:func:`fedsec.results.versions`). ``digests`` caches file digests by path
    across the cells of one audit.

    The cell's id names its file and stays stable; a stored result whose key differs is
    stale and is run again.
    """
    config = run_config(spec, cell)
    run_fields = {f.name: getattr(config, f.name) for f in fields(config)
                  if f.name != "search_path"}  # where components are found, not what they are
    attacks = [{"name": a.name, "threats": list(a.threats), "scorer": a.scorer,
                "params": dict(a.params), "scorer_params": dict(a.scorer_params),
                "show": a.show} for a in spec.attacks]
    described = {"run": run_fields, "attacks": attacks, "schema": CELL_SCHEMA_VERSION}
    cache = {} if digests is None else digests
    inputs = {path: _file_digest(path, cache)
              for path in sorted(set(_input_files(described, spec.base_dir, cache)))}
    text = json.dumps({**described, "inputs": inputs, "versions": versions()},
                      sort_keys=True, default=_json_default)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (tuple, set, frozenset)):
        return sorted(value, key=str) if isinstance(value, (set, frozenset)) else list(value)
    return str(value)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _strings(v)


def _input_files(described: Mapping[str, Any], base_dir: str,
                 cache: dict[str, str]) -> Iterator[str]:
    """The files the configuration names: each string (and each ``key=value`` option of a
    ``NAME:key=value,...`` spec) that names a regular file, from the working folder or beside
    the scenario, resolved (looked up once per audit: ``cache``)."""
    for text in _strings(described):
        memo = "\x00" + text
        if memo not in cache:
            cache[memo] = "\x00".join(_named_files(text, base_dir))
        yield from filter(None, cache[memo].split("\x00"))


def _named_files(text: str, base_dir: str) -> Iterator[str]:
    yield from _component_files(text, base_dir)
    candidates = [text]
    if ":" in text or "=" in text:
        candidates += [part.split("=", 1)[-1] for part in text.split(":", 1)[-1].split(",")]
    for candidate in candidates:
        if not candidate or len(candidate) > 4096 or "\x00" in candidate:
            continue
        for root in (Path.cwd(), Path(base_dir)):
            try:
                path = (root / candidate).resolve()
                if path.is_file():
                    yield str(path)
            except (OSError, ValueError, RuntimeError):
                continue


def _component_files(text: str, base_dir: str) -> Iterator[str]:
    """The source files of a ``package.module:Class`` component beside the scenario (its
    top-level module, or every ``.py`` file of its package), so that editing a scenario's
    own component makes its cells stale.

    Examples
    --------
    >>> list(_component_files("fedcg-naive", "."))
    []
    """
    if _COMPONENT.fullmatch(text) is None:
        return
    top = Path(base_dir) / text.partition(".")[0].partition(":")[0]
    try:
        if top.with_suffix(".py").is_file():
            yield str(top.with_suffix(".py").resolve())
        elif top.is_dir():
            yield from sorted(str(p.resolve()) for p in top.rglob("*.py") if p.is_file())
    except OSError:
        return


#: A ``package.module:Class`` component name.
_COMPONENT = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def _file_digest(path: str, cache: dict[str, str]) -> str:
    if path not in cache:
        try:
            info = os.stat(path)
            if info.st_size > _HASHED_BYTES:
                cache[path] = f"size={info.st_size},mtime_ns={info.st_mtime_ns}"
            else:
                digest = hashlib.sha256()
                with open(path, "rb") as handle:
                    while chunk := handle.read(1 << 20):
                        digest.update(chunk)
                cache[path] = digest.hexdigest()
        except OSError as error:
            cache[path] = f"unreadable: {error.strerror}"
    return cache[path]


def stored_cell_problem(result: Any, cell_id: str | None = None) -> str | None:
    """Why ``result`` (a parsed cell file) is not a cell result this fedsec wrote (for the
    cell ``cell_id``, when given), or None when its schema holds: the fields every result
    has, with their types, and an ``ok`` result's metrics, cost and attacks."""
    if not isinstance(result, dict):
        return "not a JSON object"
    if result.get("schema_version") != CELL_SCHEMA_VERSION:
        return (f"schema version {str(result.get('schema_version'))[:20]!r} is not "
                f"{CELL_SCHEMA_VERSION!r}")
    if not isinstance(result.get("cell"), str) or (cell_id is not None
                                                   and result["cell"] != cell_id):
        return f"it names cell {str(result.get('cell'))[:20]!r}, not {cell_id!r}"
    expected: dict[str, type | tuple[type, ...]] = {
        "status": str, "configuration": str, "config": dict, "dataset": str, "command": str,
        "seconds": (int, float)}
    if result.get("status") == "ok":
        expected.update(metrics=dict, reference_metrics=dict, cost=dict, versions=dict,
                        backend=dict, attacks=list)
    elif result.get("status") == "error":
        expected["error"] = str
    else:
        return f"status {str(result.get('status'))[:20]!r} is not one of {CELL_STATUSES}"
    for name, kind in expected.items():
        if not isinstance(result.get(name), kind) or isinstance(result.get(name), bool):
            return f"its {name!r} is missing or of the wrong type"
    for i, entry in enumerate(result.get("attacks", [])):
        if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str)
                                                for k in ("attack", "threat", "status"))):
            return f"its attack {i} lacks a name, threat or status"
        if entry["status"] == "ok" and not all(
                isinstance(entry.get(k), t) for k, t in (("scores", dict), ("targets", list),
                                                         ("info", dict))):
            return f"its attack {i} lacks scores, targets or info"
    return None
