"""Run a Flower app in Flower's simulation engine (Ray) under the recorder, then merge and
check what the client processes left in the spool.

:func:`run_recorded` is the one place that starts Flower's engine; :func:`cross_check`
compares each client's own log of what crossed with the ServerApp's transcript (every
instruction received and every reply sent, by digest, and nothing else);
:func:`collect_truth` gathers the plaintext updates and exposed rows the mods recorded, per
party.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from fedsec.errors import FedsecError
from fedsec.nn import MissingExtraError
from fedsec.protocols.flower import spool, tags
from fedsec.protocols.flower.client import RecordedClientApp
from fedsec.protocols.flower.recorder import Recorder, RecordingServerApp

INSTALL_HINT = 'pip install "fedsec[flower]"'


def require_flower(what: str = "Running a Flower app") -> Any:
    """The ``flwr.simulation`` module, or one line naming the extra to install."""
    try:
        import flwr.simulation
    except ImportError as error:
        raise MissingExtraError(f"{what} needs Flower, which is not installed: "
                                f"{INSTALL_HINT}.") from error
    return flwr.simulation


#: Set while Flower runs: no telemetry, and Ray's notice about GPU variables silenced.
_ENVIRONMENT = {"FLWR_TELEMETRY_ENABLED": "0", "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO": "0"}


@contextmanager
def _quiet_flower() -> Any:
    """Flower's log below ERROR off (its notice that ``run_simulation`` is deprecated
    included), its telemetry off, for the duration of the run; all restored after."""
    logger = logging.getLogger("flwr")
    level = logger.level
    saved = {key: os.environ.get(key) for key in _ENVIRONMENT}
    logger.setLevel(logging.ERROR)
    os.environ.update(_ENVIRONMENT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        logger.setLevel(level)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_recorded(server_app: Any, client_app: Any, recorder: Recorder,
                 run_config: Mapping[str, Any], *, cpus: int | None = None) -> RecordingServerApp:
    """Run ``server_app`` against one ``client_app`` per client of ``recorder`` in Flower's
    simulation engine, every message recorded; returns the wrapped ServerApp (its
    ``context`` is the ServerApp's).

    Each client is a Ray actor using one CPU, ``cpus`` of them at once (default: as many as
    the machine has, at most one per client). Ray is shut down before returning, whatever
    happened.
    """
    simulation = require_flower()
    n_clients = len(recorder.clients)
    cpus = max(1, min(n_clients, cpus or os.cpu_count() or 1))
    server = RecordingServerApp(server_app, recorder, run_config)
    client = RecordedClientApp(client_app, run_config)
    backend = {"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
               "init_args": {"num_cpus": cpus, "num_gpus": 0, "include_dashboard": False,
                             "log_to_driver": False}}
    try:
        with _quiet_flower():
            simulation.run_simulation(server_app=server, client_app=client,
                                      num_supernodes=n_clients, backend_config=backend)
    finally:
        import ray

        if ray.is_initialized():
            ray.shutdown()
    if server.context is None:
        raise FedsecError("Flower's simulation engine ended without running the ServerApp.")
    return server


def cross_check(where: Path, recorder: Recorder) -> dict[str, Any]:
    """Check every client's log against the ServerApp's transcript; a summary, or
    FedsecError naming the first disagreement.

    Each instruction the server recorded must have been received by its client with the
    same content digest, each reply the server recorded must have been sent by that client
    with the same digest, and no client may log a message the server did not record. A
    client's partition id must be the one the recorder named it by.
    """
    received: dict[str, tuple[int, str]] = {}
    sent: dict[str, tuple[int, str]] = {}
    for log in sorted((where / spool.CLIENTS).glob("*.jsonl")):
        node = int(log.stem)
        for entry in spool.read_lines(log):
            partition = entry.get("partition_id")
            if node in recorder.partitions and partition != recorder.partitions[node]:
                raise FedsecError(
                    f"Flower node {node} trains on partition {partition}, but the recorder "
                    f"named it {recorder.names[node]!r} (partition "
                    f"{recorder.partitions[node]}); the transcript's party names are wrong.")
            if entry["event"] == "received":
                received[entry["message_id"]] = (node, entry["digest"])
            else:
                sent[entry["reply_to"]] = (node, entry["digest"])
    for what, server_side, client_side in (("instruction", recorder.instructions, received),
                                           ("reply", recorder.replies, sent)):
        if server_side != client_side:
            missing = sorted(set(server_side) - set(client_side))
            extra = sorted(set(client_side) - set(server_side))
            changed = sorted(k for k in set(server_side) & set(client_side)
                             if server_side[k] != client_side[k])
            raise FedsecError(
                f"The clients' logs and the ServerApp's transcript disagree on {what} messages: "
                f"{len(missing)} recorded by the server only, {len(extra)} logged by a client "
                f"only, {len(changed)} with another content digest (first: "
                f"{(missing + extra + changed)[0]}).")
    return {"instructions": len(received), "replies": len(sent),
            "digests_matched": len(received) + len(sent),
            "client_logs": len(list((where / spool.CLIENTS).glob("*.jsonl")))}


def collect_truth(where: Path, recorder: Recorder) -> dict[str, dict[str, np.ndarray]]:
    """What the mods recorded, per party name: ``update/round<r>`` and ``model/round<r>``
    (:mod:`.tags`) for each train reply, ``secagg/round<r>/<secret>`` under SecAgg+,
    ``training/X`` and ``training/y`` where exposed."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for path in sorted((where / spool.TRUTH).glob("*.npz")):
        arrays, meta = spool.load_arrays(path)
        party = recorder.name(int(meta["node_id"]))
        server_round = int(meta["round"])
        held = out.setdefault(party, {})
        held[tags.update_key(server_round)] = arrays[tags.UPDATE]
        held[tags.model_key(server_round)] = arrays[tags.MODEL]
    for path in sorted((where / spool.SECRETS).glob("*.npz")):
        arrays, meta = spool.load_arrays(path)
        held = out.setdefault(recorder.name(int(meta["node_id"])), {})
        for name, value in arrays.items():
            held[tags.secagg_key(int(meta["round"]), name)] = value
    for path in sorted((where / spool.DATA).glob("*.npz")):
        arrays, meta = spool.load_arrays(path)
        held = out.setdefault(recorder.name(int(meta["node_id"])), {})
        held[tags.TRAINING_ROWS] = arrays["X"]
        if "y" in arrays:
            held[tags.TRAINING_LABELS] = arrays["y"]
    return out
