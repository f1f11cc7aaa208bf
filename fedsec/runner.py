"""Run one protocol end to end: a plan (:mod:`fedsec.plan`), then data, partition, federation,
run, reference, files."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fedsec.cost import summarize
from fedsec.errors import FedsecError
from fedsec.federation import Federation
from fedsec.network import Network
from fedsec.outcomes import Outcome
from fedsec.outdir import hold
from fedsec.plan import RunConfig, RunPlan, plan
from fedsec.private_store import FILE_NAME as PRIVATE_FILE
from fedsec.private_store import auxiliary_key, save_private, truth_key
from fedsec.progress import ProgressHook
from fedsec.results import (
    RESULT_FILE,
    DataSummary,
    RunRecord,
    RunResult,
    TranscriptSummary,
    compare,
    quality_warnings,
    versions,
    write_json,
)
from fedsec.seeding import generator, new_secret_seed, seed_commitment
from fedsec.threads import limited_threads
from fedsec.transcript import FILE_NAME as TRANSCRIPT_FILE
from fedsec.transcript import TranscriptWriter

if TYPE_CHECKING:  # pragma: no cover
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from fedsec.data import Dataset
    from fedsec.data.dataset import Split
    from fedsec.transport.tcp import TcpTransport

__all__ = ["RunConfig", "RunPlan", "RunResult", "data_split", "execute", "plan", "run"]


def run(config: RunConfig, out_dir: str | os.PathLike[str] | None = None, *,
        progress: Callable[[str], None] | None = None,
        sign_key: Ed25519PrivateKey | None = None,
        on_progress: ProgressHook | None = None,
        transport: TcpTransport | None = None) -> RunResult:
    """Plan ``config`` (:func:`fedsec.plan.plan`), then execute it (:func:`execute`).

    Everything that can be checked is checked before the first message: names,
    parameters, defences' applicability, the backend's operations, the
    dataset's name, the partition kind. ``sign_key`` signs the transcript's end record
    (:mod:`fedsec.transcript.signing`). ``progress`` receives what the run is doing, as
    text; ``on_progress`` how far its long loops are (:class:`~fedsec.progress.Progress`:
    rounds, epochs, iterations). Neither changes the transcript or the result. ``transport``
    carries the messages between party processes (:mod:`fedsec.transport.tcp`; a new one per
    run); the transcript is the same, and ``result.json`` says what crossed the sockets.
    """
    return execute(plan(config), out_dir, progress=progress,
                   sign_key=sign_key, on_progress=on_progress, transport=transport)


def execute(checked: RunPlan, out_dir: str | os.PathLike[str] | None = None, *,
            progress: Callable[[str], None] | None = None,
            sign_key: Ed25519PrivateKey | None = None,
            on_progress: ProgressHook | None = None,
            transport: TcpTransport | None = None) -> RunResult:
    """Run a plan; with ``out_dir``, write the transcript, result and private store there
    (and, with a ``transport``, the party processes' logs in ``out_dir/parties``).

    The linear-algebra libraries run with one thread
    (``FEDSEC_THREADS`` overrides it, :mod:`fedsec.threads`), their own setting restored after.
    """
    with limited_threads():
        if out_dir is None:
            return _execute(checked, None, progress=progress,
                            sign_key=sign_key, on_progress=on_progress, transport=transport)
        with hold(out_dir, "fedsec run") as out:
            return _execute(checked, out, progress=progress,
                            sign_key=sign_key, on_progress=on_progress, transport=transport)


def _execute(checked: RunPlan, out: Path | None, *, progress: Callable[[str], None] | None,
             sign_key: Ed25519PrivateKey | None,
             on_progress: ProgressHook | None, transport: TcpTransport | None) -> RunResult:
    from fedsec.transport.logs import LOG_FOLDER

    say = progress or (lambda _msg: None)
    config, protocol, backend = checked.config, checked.protocol, checked.backend
    defenses, spec = checked.defenses, checked.partition

    say(f"loading dataset {checked.dataset}")
    dataset, split, described = _load(checked)
    train, test = split.train, split.test
    protocol.check_data(train.n_samples, train.n_features)
    secret_seed = new_secret_seed() if config.secret_seed is None else config.secret_seed
    partition = spec.apply(
        n_samples=train.n_samples, feature_groups=train.feature_groups,
        y=train.y if train.task != "regression" else None, cohorts=train.cohorts,
        rng=generator(config.seed, "partition"), coordinators=protocol.coordinators,
    )
    header = {
        "protocol": protocol.describe(), "backend": backend.describe(),
        "defenses": [d.describe() for d in defenses], "dataset": dataset.name,
        "partition": str(spec), "parties": dict(partition.roles),
        "seed_commitment": seed_commitment(config.seed, secret_seed),
        "versions": versions(),
    }
    if out is not None:  # the directory now holds this run: never an old result beside it
        for name in (RESULT_FILE, PRIVATE_FILE):
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / LOG_FOLDER, ignore_errors=True)
    writer = TranscriptWriter(header, None if out is None else out / TRANSCRIPT_FILE,
                              sign_key=sign_key)
    network = Network(writer, partition.roles, transport=transport)
    federation = Federation.from_partition(partition, train, seed=config.seed,
                                           secret_seed=secret_seed, network=network, test=test)
    federation.progress = progress
    federation.on_progress = on_progress
    federation.log_folder = None if out is None else out / LOG_FOLDER
    say(f"running {protocol.name} among {len(partition.parties)} parties with {backend.name}")
    started = time.perf_counter()  # the protocol's own time: data loading and imports excluded
    try:
        if transport is not None:
            say(f"starting {len(partition.parties)} party processes ({transport.kind})")
            transport.open(partition.parties, None if out is None else out / LOG_FOLDER)
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
        reference = protocol.reference(train, test, seed=secret_seed)
    else:
        reference = Outcome()
    private = federation.knowledge()
    private.update({truth_key(None, *k.split("/")): v for k, v in outcome.truth.items()})
    private.update({auxiliary_key("X"): test.X, auxiliary_key("y"): test.y})
    record = RunRecord(
        protocol=protocol.describe(), backend=backend.describe(),
        defenses=tuple(d.describe() for d in defenses),
        dataset=DataSummary(name=dataset.name, train_samples=train.n_samples,
                            test_samples=test.n_samples, features=train.n_features,
                            task=train.task, scaling=checked.scaling,
                            test_size=(test.n_samples if checked.split_rows is not None
                                       else checked.test_size),
                            split=described),
        partition={"spec": str(spec), **partition.describe()},
        seed=config.seed, versions=versions(),
        secret_seed_source="random" if config.secret_seed is None else "given",
        federated_metrics=dict(outcome.metrics), centralized_metrics=dict(reference.metrics),
        comparison=compare(outcome.values, reference.values,
                           rtol=protocol.agreement_rtol(backend),
                           tolerances=protocol.agreement_tolerances(backend, reference)),
        cost=(summarize(transcript.messages, network.compute_seconds(), protocol_seconds,
                        network.crypto_seconds()) if writer.tally is None  # no file: in memory
              else writer.tally.summary(network.compute_seconds(), protocol_seconds,
                                        network.crypto_seconds())),
        transcript=TranscriptSummary(file=TRANSCRIPT_FILE, messages=len(transcript),
                                     head=transcript.footer["head"]),
        private_store=PRIVATE_FILE, command=_command_line(),
        transport=None if transport is None else transport.describe(),
        warnings=quality_warnings(outcome.metrics, reference.metrics, test.y, task=test.task,
                                  protocol=protocol.name, class_names=test.class_names),
    )
    if out is not None:
        say(f"writing {out}")
        save_private(out / PRIVATE_FILE, private, transcript_head=transcript.footer["head"],
                     seed=config.seed, secret_seed=secret_seed)
        write_json(out / RESULT_FILE, record.to_json())
    return RunResult(record=record, outcome=outcome, reference=reference,
                     transcript=transcript, private=private)


def data_split(config: RunConfig | RunPlan) -> Split:
    """The train and test sets a run of ``config`` uses: the same rows, scaled the same way.

    What a user evaluates a run's model on (``result.model.predict(split.test.X)``).

    Examples
    --------
    >>> split = data_split(RunConfig(protocol="secure-sum", dataset="iris", seed=1))
    >>> split.train.n_samples + split.test.n_samples
    150
    """
    checked = config if isinstance(config, RunPlan) else plan(config)
    return _load(checked)[1]


def _load(checked: RunPlan) -> tuple[Dataset, Split, str]:
    """The dataset, its scaled split, and how the rows were split (for the record)."""
    from fedsec.data import load_spec

    config = checked.config
    dataset = load_spec(checked.dataset)
    if checked.split_rows is not None:
        from fedsec.data.splits import split_at

        split = split_at(dataset, checked.split_rows, source=f"split file {config.split_file}")
        described = f"file {config.split_file} (sha256 {checked.split_rows.sha256[:16]})"
    else:
        split_seed = config.seed if config.split_seed is None else config.split_seed
        split = dataset.split(test_size=checked.test_size, rng=generator(split_seed, "split"))
        described = (f"seeded by split_seed {split_seed}" if config.split_seed is not None
                     else "seeded by the run's seed")
    split = split.scaled(checked.scaling)  # type: ignore[arg-type]  # fit_scaler validates it
    return dataset, split, described


def _command_line() -> str:
    argv = sys.argv
    if argv and Path(argv[0]).name == "fedsec":
        return " ".join(["fedsec", *argv[1:]])
    return ""


