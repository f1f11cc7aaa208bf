"""The spool: a run's folder where Flower's client processes leave what fedsec must collect.

Flower runs each ClientApp in a process of its own (a Ray actor in the simulation engine, a
SuperNode in deployment), so what the client side records cannot go through the ServerApp's
transcript writer. Each client process writes here instead, and fedsec merges it after the
run:

- ``clients/<node id>.jsonl``: one line per message the ClientApp received and per reply it
  sent, with the content's digest (:func:`.records.content_digest`), written by the
  outermost wrapper (:class:`.client.RecordedClientApp`): what actually crossed, to check
  against the ServerApp's transcript;
- ``truth/<node id>-<message id>.npz``: a client's plaintext update of one round, written
  by :func:`.client.record_plaintext` where the app places it (before protection);
- ``data/<node id>.npz``: the rows and labels an app exposes (:func:`.client.expose_data`);
- ``secrets/<node id>-round<r>.npz``: a client's own SecAgg+ secrets of round ``r``
  (:func:`.secagg.record_secagg_secrets`);
- ``shards/<partition id>.npz``: what fedsec hands a shipped app's client to train on;
- ``seeds/<partition id>.json``: that client's own seed (:func:`party_seed`).

The spool's path reaches the client processes in the run config (:data:`SPOOL_KEY`); a
ClientApp run without fedsec has none, and the mods then only pass messages through. Files
are numpy ``.npz`` (read with ``allow_pickle=False``) and JSON lines; nothing is pickled.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from fedsec.seeding import generator

SPOOL_KEY = "fedsec-spool"
"""Run-config key: the spool folder (absent: the app runs without fedsec, nothing is kept)."""
SEED_KEY = "fedsec-seed"
"""Run-config key: the ServerApp's own seed (:func:`party_seed` of ``server``). Every process
of the run reads the run config, so it carries nothing a client keeps secret: each client's
seed is in the spool, where only that client looks (:data:`SEEDS`,
:func:`fedsec.protocols.flower.client.client_seed`)."""
CLIENTS, TRUTH, DATA, SHARDS, SECRETS = "clients", "truth", "data", "shards", "secrets"
SEEDS = "seeds"
"""Spool folder: ``<partition>.json``, the seed of the client of that partition."""


def make_spool() -> Path:
    """A new, private spool folder (the caller removes it)."""
    root = Path(tempfile.mkdtemp(prefix="fedsec-flower-"))
    for sub in (CLIENTS, TRUTH, DATA, SHARDS, SECRETS, SEEDS):
        (root / sub).mkdir()
    return root


def party_seed(secret_seed: int, party: str) -> int:
    """A party's own seed of a Flower run (63 bits), from the run's secret seed: the ServerApp's
    (``server``) or a client's (its party name).

    Examples
    --------
    >>> party_seed(7, "server") == party_seed(7, "server") != party_seed(7, "client0")
    True
    """
    return int(generator(secret_seed, f"flower/party/{party}").integers(0, 2**63 - 1))


def save_seed(where: Path, partition: int, seed: int) -> None:
    """Hand the client of ``partition`` its seed (owner-only, in the spool)."""
    fd = os.open(where / SEEDS / f"{int(partition)}.json",
                 os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"seed": str(int(seed))}, handle)


def load_seed(where: Path, partition: int) -> int | None:
    """The seed fedsec handed the client of ``partition``; None without one."""
    path = where / SEEDS / f"{int(partition)}.json"
    if not path.is_file():
        return None
    return int(json.loads(path.read_text())["seed"])


def keep_logs(where: Path, folder: Path | None) -> list[Path]:
    """Copy the run's logs out of the spool before it goes: each client's log of what it
    received and sent (``clients/<node id>.jsonl``) and, in the deployment engine, every
    process's (``logs/*.log``), into ``folder/flower`` (owner-only). Nothing without a
    folder; returns the files written."""
    if folder is None:
        return []
    target = folder / "flower"
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    written = []
    for source in [*sorted((where / CLIENTS).glob("*.jsonl")),
                   *sorted((where / "logs").glob("*.log"))]:
        destination = target / source.name
        fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                     | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(source.read_bytes())
        written.append(destination)
    return written


def spool_of(run_config: Mapping[str, Any]) -> Path | None:
    """The spool a run config names, or None when the app runs without fedsec."""
    value = run_config.get(SPOOL_KEY)
    return Path(str(value)) if value else None


def append_line(path: Path, entry: Mapping[str, Any]) -> None:
    """Append one JSON line (one ``write`` of the whole line, in append mode)."""
    line = (json.dumps(dict(entry), sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every JSON line of ``path``."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def save_arrays(path: Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> None:
    """Write ``arrays`` and JSON ``meta`` to ``path`` atomically (no pickle)."""
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        contents: dict[str, Any] = {k: np.asarray(v) for k, v in arrays.items()}
        contents["__meta__"] = np.frombuffer(json.dumps(dict(meta)).encode(), np.uint8)
        np.savez(handle, **contents)
    os.replace(tmp, path)


def load_arrays(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """What :func:`save_arrays` wrote: the arrays and the metadata."""
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(bytes(data["__meta__"]).decode())
        return {k: data[k] for k in data.files if k != "__meta__"}, meta
