"""Format 4's chain: a batch at a time, independent of where batches are cut, covering every
chained field, and checked from a file without decoding a message."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.transcript import TranscriptWriter, check_file, read_transcript
from fedsec.transcript.arrow_format import bare_schema
from fedsec.transcript.batch_chain import BatchChain
from fedsec.transcript.chain_check import BatchChainCheck
from fedsec.transcript.message import Message, canonical_json
from fedsec.transcript.payload import encode
from fedsec.transcript.sink import to_batch

HEADER = {"protocol": {"name": "demo"}, "parties": {"a": "client", "b": "server"}}


def messages(n: int, seed: int = 0) -> list[Message]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        payload: np.ndarray | bytes = (rng.bytes(int(rng.integers(0, 9))) if i % 3 == 2 else
                                       rng.normal(size=(int(rng.integers(0, 3)), 2)))
        kind, dtype, shape, raw = encode(payload)
        meta = {"i": i} if i % 2 else {}
        out.append(Message(i, i // 4, "main", "ab"[i % 2], "ba"[i % 2], f"t{i % 3}", kind,
                           "plain", "", dtype, shape, payload, len(raw), meta, float(i), 0.0,
                           b""))
    return out


def head_of(parts: list[list[Message]], header: dict = HEADER) -> bytes:
    chain = BatchChain(canonical_json(header))
    for part in parts:
        chain.add(to_batch([(m, encode(m.payload)[3]) for m in part], bare_schema("4")))
    return chain.head()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 30), cuts=st.lists(st.integers(0, 30), max_size=6))
def test_the_chain_value_does_not_depend_on_where_batches_are_cut(n: int,
                                                                  cuts: list[int]) -> None:
    rows = messages(n)
    bounds = [0, *sorted(c for c in cuts if c <= n), n]
    parts = [rows[a:b] for a, b in itertools.pairwise(bounds)]
    assert head_of(parts) == head_of([rows])


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.sampled_from([0, 1, 7, 100, 1 << 14, (1 << 14) + 3, 50_000]),
                      max_size=12), arrays=st.booleans())
def test_payloads_chained_where_they_lie_give_the_joined_batchs_value(
        sizes: list[int], arrays: bool) -> None:
    rng = np.random.default_rng(len(sizes))
    raws = [rng.bytes(n) for n in sizes]
    payloads = [np.frombuffer(r, np.uint8) if arrays else r for r in raws]
    rows = [Message(i, 0, "main", "a", "b", "t", "bytes", "plain", "", "", (), raw, len(raw),
                    {}, 0.0, 0.0, b"") for i, raw in enumerate(raws)]
    joined = to_batch([(m, raw) for m, raw in zip(rows, raws, strict=True)], bare_schema("4"))
    apart = BatchChain(canonical_json(HEADER))
    apart.add(joined.drop_columns(["payload"]), payloads)
    assert apart.head() == head_of([rows]) and apart.n == len(rows)


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.sampled_from([0, 1, 7, 100, 50_000]), max_size=12),
       cut=st.integers(0, 1 << 17))
def test_payloads_fed_ahead_give_the_joined_batchs_value(sizes: list[int], cut: int) -> None:
    """An in-memory writer hashes payload bytes as it records them, in runs cut anywhere, and
    adds the batch with their lengths only."""
    rng = np.random.default_rng(len(sizes))
    raws = [rng.bytes(n) for n in sizes]
    rows = [Message(i, 0, "main", "a", "b", "t", "bytes", "plain", "", "", (), raw, len(raw),
                    {}, 0.0, 0.0, b"") for i, raw in enumerate(raws)]
    joined = to_batch([(m, raw) for m, raw in zip(rows, raws, strict=True)], bare_schema("4"))
    ahead = BatchChain(canonical_json(HEADER))
    data = b"".join(raws)
    ahead.feed_payloads(data[:cut])
    ahead.feed_payloads(data[cut:])
    ahead.add(joined.drop_columns(["payload"]), fed_lengths=np.array(sizes, dtype=np.int64))
    assert ahead.head() == head_of([rows]) and ahead.n == len(rows)


def test_a_sliced_batch_is_chained_like_a_built_one() -> None:
    rows = messages(12)
    batch = to_batch([(m, encode(m.payload)[3]) for m in rows], bare_schema("4"))
    chain = BatchChain(canonical_json(HEADER))
    chain.add(batch.slice(0, 5))
    chain.add(batch.slice(5))
    assert chain.head() == head_of([rows])


@pytest.mark.parametrize("change", [
    {"round": 9}, {"phase": "other"}, {"sender": "c"}, {"receiver": "c"}, {"tag": "t9"},
    {"protection": "noise"}, {"key_id": "k"}, {"size": 999}, {"meta": {"i": 1, "x": 0}},
    {"payload": np.full((2, 2), 7.0)}, {"shape": (4,)}, {"dtype": "<i8"},
])
def test_every_chained_field_changes_the_chain_value(change: dict) -> None:
    rows = messages(6)
    edited = list(rows)
    edited[3] = edited[3]._replace(**change)
    assert head_of([edited]) != head_of([rows])


def test_timings_and_the_header_are_and_are_not_covered() -> None:
    rows = messages(6)
    timed = [m._replace(elapsed=m.elapsed + 1, crypto_seconds=2.0) for m in rows]
    assert head_of([timed]) == head_of([rows])
    assert head_of([rows], {**HEADER, "seed": 1}) != head_of([rows])


def test_moving_a_byte_between_neighbouring_values_changes_the_chain_value() -> None:
    rows = messages(2)
    a = rows[0]._replace(kind="bytes", dtype="", shape=(), payload=b"ab", size=2)
    b = rows[1]._replace(kind="bytes", dtype="", shape=(), payload=b"c", size=1)
    moved_a, moved_b = a._replace(payload=b"a"), b._replace(payload=b"bc")
    assert head_of([[a, b]]) != head_of([[moved_a, moved_b]])


def write(path: Path, n: int, flush_rows: int) -> None:
    writer = TranscriptWriter(HEADER, path, flush_rows=flush_rows)
    for i in range(n):
        writer.record(round=i, phase="p", sender="a", receiver="b", tag="t",
                      payload=np.full(3, float(i)))
    writer.close()


def test_a_file_and_memory_give_one_chain_value_whatever_the_batches(tmp_path: Path) -> None:
    write(tmp_path / "a.arrow", 50, flush_rows=7)
    write(tmp_path / "b.arrow", 50, flush_rows=50)
    memory = TranscriptWriter(HEADER, flush_rows=3)
    for i in range(50):
        memory.record(round=i, phase="p", sender="a", receiver="b", tag="t",
                      payload=np.full(3, float(i)))
    heads = {read_transcript(tmp_path / "a.arrow").footer["head"],  # type: ignore[index]
             read_transcript(tmp_path / "b.arrow").footer["head"],  # type: ignore[index]
             memory.close().footer["head"]}  # type: ignore[index]
    assert len(heads) == 1


@pytest.mark.parametrize("flush_rows", [1, 3, 8192])
def test_mixed_payloads_give_one_chain_value_in_a_file_and_in_memory(
        tmp_path: Path, flush_rows: int) -> None:
    """Small arrays, bytes, arrays of tens of kilobytes and of megabytes, in any order: the
    in-memory writer (small ones joined, larger ones kept for the run, the largest hashed
    where they lie) chains them as the file does."""
    rng = np.random.default_rng(3)
    sizes = [1, 700, 6_000, 40_000, 300_000, 140_000, 1 << 17, 2, 0, 5_000] * 3
    payloads: list[np.ndarray | bytes] = [
        rng.bytes(8 * n) if i % 7 == 3 else rng.normal(size=(n,) if i % 2 else (1, n))
        for i, n in enumerate(sizes)]
    heads = []
    for path in (tmp_path / "t.arrow", None):
        writer = TranscriptWriter(HEADER, path, flush_rows=flush_rows, flush_bytes=3 << 20)
        for i, payload in enumerate(payloads):
            got = writer.record(round=i, phase="p", sender="a", receiver="b", tag="t",
                                payload=payload)
            assert np.array_equal(np.asarray(got), np.asarray(payload))
        transcript = writer.close()
        assert transcript.verify().ok
        heads.append(transcript.footer["head"])  # type: ignore[index]
    assert heads[0] == heads[1] == read_transcript(tmp_path / "t.arrow").footer["head"]  # type: ignore[index]


def test_an_edit_is_located_to_its_batch_from_the_file(tmp_path: Path) -> None:
    write(tmp_path / "t.arrow", 20, flush_rows=5)
    data = bytearray((tmp_path / "t.arrow").read_bytes())
    at = bytes(data).index(np.full(3, 12.0).tobytes())
    data[at + 3] ^= 0x10  # message 12, in the third batch (10 to 14)
    (tmp_path / "bad.arrow").write_bytes(bytes(data))
    verdict = check_file(tmp_path / "bad.arrow", keep_messages=False)
    assert verdict.status == "tampered" and verdict.report is not None
    assert verdict.report.first_bad == 10 and "messages 10 to 14" in verdict.summary()
    loaded = read_transcript(tmp_path / "bad.arrow")  # checkpoints read from the file
    assert loaded.verify().first_bad == 10
    assert replace(loaded, checkpoints=()).verify().status == "tampered"


def test_checking_without_decoding_gives_the_decoding_verdict(tmp_path: Path) -> None:
    write(tmp_path / "t.arrow", 30, flush_rows=4)
    fast = check_file(tmp_path / "t.arrow", keep_messages=False)
    full = check_file(tmp_path / "t.arrow")
    assert fast.status == full.status == "intact"
    assert fast.report is not None and full.report is not None
    assert fast.report.n_messages == full.report.n_messages == 30


def test_a_missing_value_in_a_chained_column_is_damage() -> None:
    rows = messages(3)
    batch = to_batch([(m, encode(m.payload)[3]) for m in rows], bare_schema("4"))
    tags = pa.array(["t0", None, "t2"], type=pa.string())
    holed = batch.set_column(batch.schema.get_field_index("tag"), "tag", tags)
    check = BatchChainCheck(HEADER)
    assert not check.add_batch(holed, None)
    assert check.first_bad == 0 and "missing value" in check.problems[0]
