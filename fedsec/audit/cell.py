"""Run one cell of an audit: the protocol, then every attack as every threat model."""

from __future__ import annotations

import time
import traceback
from typing import Any

import numpy as np

from fedsec import registry
from fedsec.audit.examples import examples
from fedsec.audit.spec import AttackSpec, AuditSpec, Cell
from fedsec.convergence import of_attack
from fedsec.errors import FedsecError
from fedsec.plugin_registry import SearchPath
from fedsec.runner import RunConfig, RunResult, run
from fedsec.threads import limited_threads
from fedsec.views import build_view

CELL_SCHEMA_VERSION = "1"


def run_cell(spec: AuditSpec, cell: Cell, *, command: str = "",
             prefault: bool = True) -> dict[str, Any]:
    """The JSON-able result of one cell; failures are recorded, never raised.

    Reconstructed values are not stored: only the scorers' summaries and the attacks' own
    metadata, and the few rows an ``[[attacks]]`` entry asks for with ``show``
    (:mod:`fedsec.audit.examples`). The linear-algebra libraries run with one thread meanwhile
    (:func:`fedsec.threads.limited_threads`).
    """
    with limited_threads():
        return _run_cell(spec, cell, command=command, prefault=prefault)


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
    """The run one cell of ``spec`` makes."""
    return RunConfig(protocol=cell.protocol, dataset=cell.dataset or spec.datasets[0],
                     partition=spec.partition,
                     backend=cell.backend, backend_params=dict(spec.backend_params),
                     defenses=[cell.defense] if cell.defense else [], params=dict(cell.params),
                     seed=cell.seed, test_size=spec.test_size, scaling=spec.scaling,
                     split_file=spec.split_file, split_seed=spec.split_seed,
                     search_path=spec.search_path)


def _run_cell(spec: AuditSpec, cell: Cell, *, command: str,
              prefault: bool) -> dict[str, Any]:
    started = time.perf_counter()
    base = cell_base(spec, cell, command)
    try:
        result = run(run_config(spec, cell), prefault=prefault)
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
            "agrees_with_reference": record.comparison.agrees,
            "cost": _jsonable(dict(record.total_cost)), "versions": dict(record.versions),
            "backend": dict(record.backend), "attacks": attacks,
            "seconds": time.perf_counter() - started}


def _attack(name: str, threat: str, spec_attack: AttackSpec, result: RunResult,
            search: SearchPath) -> dict[str, Any]:
    entry: dict[str, Any] = {"attack": name, "threat": threat, "scorer": spec_attack.scorer,
                             "params": dict(spec_attack.params)}
    started = time.perf_counter()
    try:
        view = build_view(result.transcript, threat, result.private)
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
