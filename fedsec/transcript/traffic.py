"""A record batch's traffic counted from its columns, without building its messages.

:meth:`fedsec.cost.Tally.add` counts messages one by one; :func:`count_batch` adds the same
figures for a whole batch with numpy (the names dictionary-encoded by Arrow, the sums by
``numpy.bincount``), so ``fedsec inspect`` sums a large transcript's cost as fast as it checks
its chain. tests/transcript/test_traffic.py checks that both count alike.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from fedsec.cost import Tally
from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.columns import numbers


def count_batch(tally: Tally, batch: pa.RecordBatch) -> None:
    """Add ``batch``'s messages (validated, of any transcript format) to ``tally``."""
    if not batch.num_rows:
        return
    columns = {fmt.field_name(name): batch.column(i) for i, name in enumerate(batch.schema.names)}
    parties, sender, receiver = _parties(columns["sender"], columns["receiver"])
    tags, tag = _codes(columns["tag"])
    size = numbers(columns["size"])
    # timings are not chained: a file may hold a missing one, counted as none
    timings = columns["crypto_seconds"]
    crypto = np.zeros(len(size)) if timings.null_count else numbers(timings)
    for i in np.flatnonzero(crypto).tolist():  # in order, adding as Tally.add does
        seconds = float(crypto[i])
        tally.crypto_total += seconds
        for entry in (tally.by_party[parties[sender[i]]], tally.by_tag[tags[tag[i]]]):
            entry["crypto_seconds"] = entry.get("crypto_seconds", 0.0) + seconds
    moved = sender != receiver  # a party's own record (e.g. key generation) is not traffic
    if not moved.any():
        return
    size, sender, receiver, tag = size[moved], sender[moved], receiver[moved], tag[moved]
    tally.total["messages"] += int(moved.sum())
    tally.total["bytes"] += int(size.sum())
    for codes, what in ((sender, "sent"), (receiver, "received")):
        counts, sums = _sums(codes, size, len(parties))
        for i in np.flatnonzero(counts):
            entry = tally.by_party[parties[i]]
            entry[f"messages_{what}"] += int(counts[i])
            entry[f"bytes_{what}"] += int(sums[i])
    rounds, round_ = np.unique(numbers(columns["round"])[moved], return_inverse=True)
    phases, phase = _codes(columns["phase"])
    groups: list[tuple[Mapping, list, np.ndarray]] = [
        (tally.by_round, [int(r) for r in rounds], round_),
        (tally.by_phase, phases, phase[moved]), (tally.by_tag, tags, tag)]
    for table, names, codes in groups:
        counts, sums = _sums(codes, size, len(names))
        for i in np.flatnonzero(counts):
            entry = table[names[i]]
            entry["messages"] += int(counts[i])
            entry["bytes"] += int(sums[i])


def _codes(column: pa.Array) -> tuple[list[str], np.ndarray]:
    """The distinct values of a string column and each row's index among them."""
    encoded = column.dictionary_encode()
    return encoded.dictionary.to_pylist(), numbers(encoded.indices).astype(np.int64)


def _parties(senders: pa.Array, receivers: pa.Array) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The party names of both columns, and each row's sender and receiver among them."""
    sender_names, sender = _codes(senders)
    receiver_names, receiver = _codes(receivers)
    names = list(dict.fromkeys([*sender_names, *receiver_names]))
    index = {name: i for i, name in enumerate(names)}
    as_sender = np.array([index[n] for n in sender_names], dtype=np.int64)
    as_receiver = np.array([index[n] for n in receiver_names], dtype=np.int64)
    return names, as_sender[sender], as_receiver[receiver]


def _sums(codes: np.ndarray, size: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Messages and bytes per code (exact below 2**53 bytes, where doubles hold integers)."""
    counts = np.bincount(codes, minlength=n)
    sums = np.rint(np.bincount(codes, weights=size.astype(np.float64), minlength=n))
    return counts, sums.astype(np.int64)
