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
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fedsec.errors import ValidationError

FILE_NAME = "private.npz"
_BYTES_INDEX = "__bytes_entries__"
#: The run a store belongs to: the chain head of its transcript (not a truth entry).
_RUN_INDEX = "__run__"
_PARTY, _OUTCOME, _SEP = "party", "outcome", "/"


class TruthKey(NamedTuple):
    """A ground-truth key taken apart: whose (a party, or the run's outcome) and what.

    ``party`` is None for outcome entries (what the run computed, for example a
    Gram matrix); ``path`` is what follows the owner (``("shard", "cell0", "X")``).
    """

    party: str | None
    path: tuple[str, ...]

    def __str__(self) -> str:
        head = (_OUTCOME,) if self.party is None else (_PARTY, self.party)
        return _SEP.join((*head, *self.path))

    @property
    def local(self) -> str:
        """The key inside the owner's own holdings (what :meth:`View.own` returns)."""
        return _SEP.join(self.path)


def truth_key(party: str | None, *path: str | int) -> str:
    """The store key of ``path`` held by ``party`` (None: an outcome of the run).

    Every key of the private store, every reconstruction's estimate and every
    scorer's target is built here and taken apart by :func:`parse_truth_key`.

    Examples
    --------
    >>> truth_key("party2", "shard", "cell0", "X")
    'party/party2/shard/cell0/X'
    >>> truth_key(None, "gram", "cohort1")
    'outcome/gram/cohort1'
    """
    parts = tuple(str(p) for p in path)
    owner = party if party is None else _check_part(party, "party")
    for part in parts:
        _check_part(part, "path element")
    return str(TruthKey(owner, parts))


def value_key(party: str, name: str) -> str:
    """The store key of a value ``name`` (a family's tag, ``/``-separated) that ``party``
    computed and keeps (``Party.private``): what an attack's estimate of it is keyed by.

    >>> value_key("client0", "update/round1")
    'party/client0/value/update/round1'
    """
    return truth_key(party, *held_value(name).split(_SEP))


def held_value(name: str) -> str:
    """The key of a value ``name`` inside its owner's own holdings (what a View's
    ``knowledge`` of a coalition member holds).

    >>> held_value("fdskl/offsets")
    'value/fdskl/offsets'
    """
    return _SEP.join(("value", name))


def held_shard(cell: int, field: str) -> str:
    """The key of one field of a shard cell inside its owner's own holdings.

    >>> held_shard(0, "X")
    'shard/cell0/X'
    """
    return _SEP.join(shard_path(cell, field))


def is_held_shard_field(key: str, field: str) -> bool:
    """Whether ``key`` of a party's own holdings is ``field`` of one of its shard cells.

    >>> is_held_shard_field("shard/cell0/X", "X"), is_held_shard_field("value/X", "X")
    (True, False)
    """
    parts = key.split(_SEP)
    return len(parts) == 3 and parts[0] == "shard" and parts[2] == field


def shard_key(party: str, cell: int, field: str) -> str:
    """The key of one field (``X``, ``y``, ``rows``, ``columns``) of a party's shard cell.

    >>> shard_key("hospital1", 0, "X")
    'party/hospital1/shard/cell0/X'
    """
    return truth_key(party, *shard_path(cell, field))


def shard_path(cell: int, field: str) -> tuple[str, ...]:
    """The path of a shard field inside a party's own holdings."""
    return ("shard", f"cell{int(cell)}", field)


def auxiliary_key(field: str) -> str:
    """The key of one field (``X``, ``y``) of the run's auxiliary population: the held-out
    records of the same dataset that no party holds (the test split), which an adversary may
    match re-identified rows against (scorer ``matched-rows``, ``pool=auxiliary``).

    >>> auxiliary_key("X")
    'outcome/auxiliary/X'
    """
    return truth_key(None, "auxiliary", field)


def parse_truth_key(key: str) -> TruthKey:
    """Take a key of the store apart; the inverse of :func:`truth_key`.

    Examples
    --------
    >>> parse_truth_key("party/party2/value/vector")
    TruthKey(party='party2', path=('value', 'vector'))
    >>> parse_truth_key("outcome/gram/total").party is None
    True
    >>> parse_truth_key("gram/total")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedsec.errors.ValidationError: 'gram/total' is not a ground-truth key: ...
    """
    parts = key.split(_SEP)
    if parts[0] == _PARTY and len(parts) >= 3 and all(parts[1:]):
        return TruthKey(parts[1], tuple(parts[2:]))
    if parts[0] == _OUTCOME and len(parts) >= 2 and all(parts[1:]):
        return TruthKey(None, tuple(parts[1:]))
    raise ValidationError(
        f"{key!r} is not a ground-truth key: keys read 'party/NAME/...' or 'outcome/...'; "
        "build them with fedsec.private_store.truth_key."
    )


def _check_part(part: str, what: str) -> str:
    if not part or _SEP in part:
        raise ValidationError(f"A ground-truth key's {what} must be non-empty and free of "
                              f"{_SEP!r}; got {part!r}.")
    return part


def save_private(path: str | os.PathLike[str], entries: Mapping[str, np.ndarray | bytes], *,
                 transcript_head: str = "", seed: int | None = None,
                 secret_seed: int | None = None) -> None:
    """Write ``entries`` atomically; byte strings are kept as bytes on reload.

    ``transcript_head`` (the final chain value of the run's transcript) binds the store to its
    run: :func:`check_same_run` refuses a store from another run. ``seed`` and ``secret_seed``
    are the run's seeds (the auditor's; the transcript holds only a keyed commitment to them):
    :func:`run_seeds` reads them back, so a run can be reproduced exactly.
    """
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
    if transcript_head or seed is not None or secret_seed is not None:
        run = {"transcript_head": transcript_head, "seed": None if seed is None else str(seed),
               "secret_seed": None if secret_seed is None else str(secret_seed)}
        arrays[_RUN_INDEX] = np.frombuffer(json.dumps(run).encode(), dtype=np.uint8)
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


#: What a damaged or foreign file makes numpy's reader raise.
_UNREADABLE = (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile)


def _unreadable(path: str | os.PathLike[str], error: BaseException) -> ValidationError:
    return ValidationError(f"{str(path)!r} is not a readable private store ({error}); use the "
                           f"{FILE_NAME} that 'fedsec run' wrote.")


def load_private(path: str | os.PathLike[str]) -> dict[str, np.ndarray | bytes]:
    """Read a store written by :func:`save_private`.

    Raises
    ------
    ValidationError
        When the file is not a readable private store (damaged, or something else).
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            byte_names = set(json.loads(bytes(data[_BYTES_INDEX]).decode()))
            return {
                name: (bytes(data[name]) if name in byte_names else data[name])
                for name in data.files
                if name not in (_BYTES_INDEX, _RUN_INDEX)
            }
    except _UNREADABLE as error:
        raise _unreadable(path, error) from None


def run_seeds(path: str | os.PathLike[str]) -> tuple[int | None, int | None]:
    """The run's ``seed`` and ``secret_seed`` recorded in the store at ``path`` (None where the
    store records none: written outside a run, or before secret seeds were recorded)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if _RUN_INDEX not in data.files:
                return None, None
            run = json.loads(bytes(data[_RUN_INDEX]).decode())
    except (*_UNREADABLE, AttributeError) as error:
        raise _unreadable(path, error) from None
    if not isinstance(run, dict):
        raise _unreadable(path, ValueError("its run record is not an object"))
    seeds = []
    for name in ("seed", "secret_seed"):
        value = run.get(name)
        try:
            seeds.append(None if value is None else int(value))
        except (TypeError, ValueError) as error:
            raise _unreadable(path, error) from None
    return seeds[0], seeds[1]


def check_same_run(path: str | os.PathLike[str], transcript_head: str) -> None:
    """Refuse the store at ``path`` when it records another run's transcript.

    Stores written before runs were recorded in them are accepted.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            if _RUN_INDEX not in data.files:
                return
            recorded = json.loads(bytes(data[_RUN_INDEX]).decode()).get("transcript_head")
    except (*_UNREADABLE, AttributeError) as error:
        raise _unreadable(path, error) from None
    if recorded != transcript_head:
        raise ValidationError(
            f"{str(path)!r} belongs to another run (its transcript ended in chain value "
            f"{str(recorded)[:16]}…, this one in {transcript_head[:16]}…); use the private "
            "store of the run that wrote this transcript.")


def party_entries(
    entries: Mapping[str, np.ndarray | bytes], party: str
) -> dict[str, np.ndarray | bytes]:
    """The part of a store that belongs to ``party``, keyed by :attr:`TruthKey.local`."""
    out: dict[str, np.ndarray | bytes] = {}
    for key, value in entries.items():
        parsed = parse_truth_key(key)
        if parsed.party == party:
            out[parsed.local] = value
    return out
