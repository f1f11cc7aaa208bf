"""The auditor's private store: what each party privately holds, kept beside a transcript.

Shards, key material and private values of every party of a run, in one
NumPy ``.npz`` file read with ``allow_pickle=False``. Attacks never read it
directly: a View takes only the coalition's own part of it, and scoring takes
the rest as ground truth.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from fedsec.errors import ValidationError

FILE_NAME = "private.npz"
_BYTES_INDEX = "__bytes_entries__"


def save_private(path: str | os.PathLike[str], entries: Mapping[str, np.ndarray | bytes]) -> None:
    """Write ``entries`` atomically; byte strings are kept as bytes on reload."""
    arrays: dict[str, np.ndarray] = {}
    byte_names = []
    for name, value in entries.items():
        if isinstance(value, (bytes, bytearray)):
            arrays[name] = np.frombuffer(bytes(value), dtype=np.uint8)
            byte_names.append(name)
        else:
            arr = np.asarray(value)
            if arr.dtype.kind not in "biufc":
                raise ValidationError(
                    f"Private value {name!r} has dtype {arr.dtype}; only numeric arrays and bytes "
                    "can be stored."
                )
            arrays[name] = arr
    arrays[_BYTES_INDEX] = np.frombuffer(json.dumps(byte_names).encode(), dtype=np.uint8)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez_compressed(handle, allow_pickle=False, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_private(path: str | os.PathLike[str]) -> dict[str, np.ndarray | bytes]:
    """Read a store written by :func:`save_private`."""
    with np.load(path, allow_pickle=False) as data:
        byte_names = set(json.loads(bytes(data[_BYTES_INDEX]).decode()))
        return {
            name: (bytes(data[name]) if name in byte_names else data[name])
            for name in data.files
            if name != _BYTES_INDEX
        }


def party_entries(
    entries: Mapping[str, np.ndarray | bytes], party: str
) -> dict[str, np.ndarray | bytes]:
    """The part of a store that belongs to ``party``, without the ``party/NAME/`` prefix."""
    prefix = f"party/{party}/"
    return {k[len(prefix):]: v for k, v in entries.items() if k.startswith(prefix)}
