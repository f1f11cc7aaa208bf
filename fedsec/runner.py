"""Run one protocol end to end: data, partition, federation, run, reference, files."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fedsec import registry
from fedsec.cost import summarize
from fedsec.errors import FedsecError, ValidationError
from fedsec.federation import Federation
from fedsec.network import Network
from fedsec.outcomes import Outcome
from fedsec.private_store import FILE_NAME as PRIVATE_FILE
from fedsec.private_store import save_private, truth_key
from fedsec.results import (
    RESULT_FILE,
    RESULT_SCHEMA_VERSION,
    RunResult,
    compare,
    versions,
    write_json,
)
from fedsec.seeding import generator
from fedsec.transcript import FILE_NAME as TRANSCRIPT_FILE
from fedsec.transcript import TranscriptWriter
from fedsec.validation import check_float, check_int


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """What to run. Names are registry names (or ``module:Class`` paths).

    ``dataset`` is a name, ``NAME:key=value,...`` (options, including
    ``positive=<class>`` for one class against the rest; see
    :func:`fedsec.data.load_spec`) or a ``.csv`` path. ``dataset`` and
    ``partition`` default to the protocol's own defaults;
    ``reference=False`` skips the centralized reference (no comparison).
    """

    protocol: str
    dataset: str | None = None
    partition: str | Mapping[str, Any] | None = None
    backend: str = "plain"
    backend_params: Mapping[str, Any] = field(default_factory=dict)
    defenses: Sequence[tuple[str, Mapping[str, Any]]] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    test_size: float | int | None = None
    scaling: str = "minmax"
    reference: bool = True

    def __post_init__(self) -> None:
        check_int(self.seed, owner="run", name="seed", min_value=0)
        if isinstance(self.test_size, int) and not isinstance(self.test_size, bool):
            check_int(self.test_size, owner="run", name="test_size", min_value=1)
        elif self.test_size is not None:
            check_float(self.test_size, owner="run", name="test_size", min_value=0.0,
                        max_value=0.9, min_inclusive=False)


def run(config: RunConfig, out_dir: str | os.PathLike[str] | None = None, *,
        progress: Callable[[str], None] | None = None, prefault: bool = True) -> RunResult:
    """Run ``config``; with ``out_dir``, write the transcript, result and private store there.

    ``prefault`` lets the transcript's writer fault memory in ahead on a helper
    thread (see :class:`~fedsec.transcript.TranscriptWriter`); callers that keep
    every core busy already turn it off.

    Everything that can be checked is checked before the first message: names,
    parameters, defences' applicability, the backend's operations, the
    partition kind.
    """
    say = progress or (lambda _msg: None)
    started = time.perf_counter()
    protocol_cls = registry.get("protocol", config.protocol)
    backend = registry.create("backend", config.backend, dict(config.backend_params))
    defenses = [registry.create("defense", n, dict(p)) for n, p in config.defenses]
    params = dict(config.params)
    for defense in defenses:
        if defense.protocols and protocol_cls.name not in defense.protocols:
            raise ValidationError(
                f"Defence {defense.name!r} does not apply to protocol {protocol_cls.name!r}; it "
                f"applies to: {', '.join(sorted(defense.protocols))}."
            )
        params = defense.configure(params)
    protocol = protocol_cls(**params)
    protocol.check_backend(backend)

    from fedsec.data import load_spec
    from fedsec.partition import parse_partition

    dataset_name = config.dataset or protocol.default_dataset
    say(f"loading dataset {dataset_name}")
    dataset = load_spec(dataset_name)
    test_size = protocol.default_test_size if config.test_size is None else config.test_size
    split = dataset.split(test_size=test_size, rng=generator(config.seed, "split"))
    split = split.scaled(config.scaling)  # type: ignore[arg-type]  # fit_scaler validates it
    train, test = split.train, split.test
    spec = parse_partition(config.partition or protocol.default_partition)
    if spec.kind not in protocol.partition_kinds:
        raise ValidationError(
            f"Protocol {protocol.name!r} runs on {', '.join(protocol.partition_kinds)} partitions; "
            f"got {spec.kind!r}. Use for example --partition {protocol.default_partition}."
        )
    partition = spec.apply(
        n_samples=train.n_samples, feature_groups=train.feature_groups,
        y=train.y if train.task != "regression" else None, cohorts=train.cohorts,
        rng=generator(config.seed, "partition"), coordinators=protocol.coordinators,
    )
    header = {
        "protocol": protocol.describe(), "backend": backend.describe(),
        "defenses": [d.describe() for d in defenses], "dataset": dataset.name,
        "partition": str(spec), "parties": dict(partition.roles), "seed": config.seed,
        "versions": versions(),
    }
    out = None if out_dir is None else Path(out_dir)
    writer = TranscriptWriter(header, None if out is None else out / TRANSCRIPT_FILE,
                              prefault=prefault)
    network = Network(writer, partition.roles)
    federation = Federation.from_partition(partition, train, seed=config.seed, network=network,
                                           test=test)
    say(f"running {protocol.name} among {len(partition.parties)} parties with {backend.name}")
    try:
        outcome = protocol.run(federation, backend, defenses)
    except BaseException as error:
        network.close(error)
        raise
    transcript = network.close()
    if transcript.footer is None:  # pragma: no cover - a closed writer always ends with one
        raise FedsecError("The transcript writer closed without an end record.")
    protocol_seconds = time.perf_counter() - started
    if config.reference:
        say("computing the centralized reference")
        reference = protocol.reference(train, test, seed=config.seed)
    else:
        reference = Outcome()
    private = federation.knowledge()
    private.update({truth_key(None, *k.split("/")): v for k, v in outcome.truth.items()})
    record = {
        "schema_version": RESULT_SCHEMA_VERSION,
        "protocol": protocol.describe(), "backend": backend.describe(),
        "defenses": [d.describe() for d in defenses],
        "dataset": {"name": dataset.name, "train_samples": train.n_samples,
                    "test_samples": test.n_samples, "features": train.n_features,
                    "task": train.task, "scaling": config.scaling, "test_size": test_size},
        "partition": {"spec": str(spec), **partition.describe()},
        "seed": config.seed, "versions": versions(),
        "metrics": {"federated": dict(outcome.metrics), "centralized": dict(reference.metrics)},
        "comparison": compare(outcome.values, reference.values,
                              rtol=protocol.agreement_rtol(backend)),
        "cost": summarize(transcript.messages, network.compute_seconds(),
                          protocol_seconds, network.crypto_seconds()),
        "transcript": {"file": TRANSCRIPT_FILE, "messages": len(transcript),
                       "head": transcript.footer["head"]},
        "private_store": PRIVATE_FILE,
        "command": _command_line(),
    }
    if out is not None:
        say(f"writing {out}")
        save_private(out / PRIVATE_FILE, private)
        write_json(out / RESULT_FILE, record)
    return RunResult(record=record, outcome=outcome, reference=reference,
                     transcript=transcript, private=private)


def _command_line() -> str:
    argv = sys.argv
    if argv and Path(argv[0]).name == "fedsec":
        return " ".join(["fedsec", *argv[1:]])
    return ""


