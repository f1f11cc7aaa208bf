"""A transcript read back keeps the file's record batches: its messages equal those decoded one
by one, its payloads are views of the file, and its chain is checked from the batches with the
verdict the messages give, on any damaged file."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.errors import TranscriptError
from fedsec.transcript import Transcript, TranscriptWriter, check_file, columnar, read_transcript
from fedsec.transcript.batch_chain import BatchChain
from fedsec.transcript.columnar import ColumnMessages
from fedsec.transcript.damage import MUTATIONS, mutate
from fedsec.transcript.message import canonical_json
from fedsec.transcript.reader import open_messages
from fedsec.views import build_view

HEADER = {"protocol": {"name": "demo"}, "parties": {"a": "client", "b": "server", "c": "client"}}


def record(writer: TranscriptWriter, n: int) -> None:
    """Arrays of several dtypes and sizes, bytes, metadata, three parties."""
    rng = np.random.default_rng(1)
    for i in range(n):
        payload: Any = (b"ct%d" % i if i % 5 == 4 else np.arange(i % 7, dtype="<i4") if i % 3
                        else rng.normal(size=(2, 700 if i % 11 == 0 else 3)))
        sender, receiver = [("a", "b"), ("b", "a"), ("c", "b"), ("b", "c")][i % 4]
        writer.record(round=i // 10, phase="main", sender=sender, receiver=receiver,
                      tag=f"t{i % 3}", payload=payload, meta={"i": i} if i % 2 else None,
                      protection="paillier" if i % 5 == 4 else "plain",
                      key_id="pk" if i % 5 == 4 else "")


@cache
def small_file() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        writer = TranscriptWriter(HEADER, Path(tmp) / "t.arrow", flush_rows=4)
        record(writer, 30)
        writer.close()
        return (Path(tmp) / "t.arrow").read_bytes()


def decoded(path: Path) -> Transcript:
    """The transcript at ``path`` with its messages decoded one by one (the reference)."""
    with open_messages(path) as stream:
        messages = tuple(stream)
        return Transcript(header=stream.header, messages=messages, footer=stream.footer,
                          read_problems=tuple(stream.problems), format_version=stream.version,
                          damaged_at=stream.damaged_at, checkpoints=tuple(stream.checkpoints))


def fields(m: Any) -> tuple[Any, ...]:
    """Every field but the payload (a NaN timing, as byte damage may leave, equal to itself)."""
    return tuple("nan" if isinstance(v, float) and v != v else v
                 for v in m._replace(payload=None))


def assert_same_messages(got: Any, expected: Any) -> None:
    got, expected = list(got), list(expected)
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert fields(a) == fields(b)
        assert type(a.payload) is type(b.payload)
        if isinstance(a.payload, np.ndarray):
            assert (a.payload.dtype, a.payload.shape) == (b.payload.dtype, b.payload.shape)
            assert not a.payload.flags.writeable
        assert (a.payload.tobytes() if isinstance(a.payload, np.ndarray) else a.payload) == (
            b.payload.tobytes() if isinstance(b.payload, np.ndarray) else b.payload)


def test_messages_read_back_equal_those_decoded_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "t.arrow"
    path.write_bytes(small_file())
    loaded, reference = read_transcript(path), decoded(path)
    messages = loaded.messages
    assert isinstance(messages, ColumnMessages) and messages.whole and messages.as_written
    assert_same_messages(messages, reference.messages)
    assert_same_messages([messages[i] for i in range(-30, 30)], reference.messages * 2)
    assert_same_messages(messages[3:17:3], reference.messages[3:17:3])
    assert_same_messages(messages[::-4], reference.messages[::-4])
    with pytest.raises(IndexError):
        _ = messages[30]
    # payloads are views of the file's bytes: two reads of one message share their memory
    assert np.shares_memory(messages[11].payload, messages[5:12][-1].payload)
    assert loaded.verify() == reference.verify() and loaded.verify().ok
    verdict = check_file(path)
    assert verdict.transcript is not None
    assert isinstance(verdict.transcript.messages, ColumnMessages)
    assert_same_messages(verdict.transcript.messages, reference.messages)


@pytest.mark.parametrize("few_links", [1 << 16, 0])  # links counted, or sorted
def test_select_and_tags_answer_as_the_messages_do(tmp_path: Path, few_links: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columnar, "_FEW_LINKS", few_links)
    path = tmp_path / "t.arrow"
    path.write_bytes(small_file())
    loaded = read_transcript(path)
    messages = list(decoded(path).messages)
    renamed = {"t1": "one"}
    assert isinstance(loaded.messages, ColumnMessages)
    seen = loaded.messages.observed(lambda s, r: "c" not in (s, r), renamed)
    expected = [m._replace(tag=renamed.get(m.tag, m.tag)) for m in messages
                if "c" not in (m.sender, m.receiver)]
    assert_same_messages(seen, expected)
    assert seen.tags() == {m.tag for m in expected} == {"t0", "one", "t2"}
    for where in ({"tag": "one"}, {"tag": "t1"}, {"sender": "b", "round": 1}, {"seq": 8},
                  {"round": 2**40}, {"kind": "bytes", "protection": "paillier"},
                  {"key_id": "pk", "tag": "t2"}, {"round": True}, {"meta": {"i": 3}},
                  {"shape": (3,)}, {}):
        assert_same_messages(seen.select(**where), [
            m for m in expected if all(getattr(m, k) == v for k, v in where.items())])
    assert_same_messages(loaded.select(sender="c"), [m for m in messages if m.sender == "c"])


def test_a_view_of_a_run_streamed_to_disk_reads_the_file_as_columns(tmp_path: Path) -> None:
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=4)
    record(writer, 30)
    transcript = writer.close()
    view = build_view(transcript, "c")
    assert isinstance(view.messages, ColumnMessages)
    assert_same_messages(view.messages, [m for m in decoded(tmp_path / "t.arrow").messages
                                         if "c" in (m.sender, m.receiver)])
    assert view.tags() == {"t0", "t1", "t2"}
    assert [m.seq for m in view.select(tag="t1")] == [7, 10, 19, 22]


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(MUTATIONS), seed=st.integers(0, 2**32 - 1))
def test_a_damaged_file_gets_the_verdict_its_messages_get(kind: str, seed: int) -> None:
    data = mutate(small_file(), kind, np.random.default_rng(seed))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.arrow"
        path.write_bytes(data)
        try:
            reference = decoded(path)
        except TranscriptError:
            with pytest.raises(TranscriptError):
                read_transcript(path)
            return
        loaded = read_transcript(path)
        assert (loaded.read_problems, loaded.damaged_at, loaded.checkpoints, loaded.footer) == (
            reference.read_problems, reference.damaged_at, reference.checkpoints,
            reference.footer)
        assert_same_messages(loaded.messages, reference.messages)
        assert loaded.verify() == reference.verify()


def resaved(data: bytes, sizes: list[int], marked: set[int], flip: int | None) -> bytes:
    """``data`` re-saved by pyarrow in batches of ``sizes`` rows, the chain value recorded
    only after the batches in ``marked``, a byte of message ``flip``'s payload changed."""
    reader = ipc.open_file(pa.py_buffer(data))
    originals = [reader.get_batch_with_custom_metadata(i)
                 for i in range(reader.num_record_batches)]
    end, footer = originals[-1]
    table = pa.Table.from_batches([b for b, _ in originals[:-1]]).combine_chunks()
    chain = BatchChain(canonical_json(HEADER))
    heads, at = {}, 0
    for size in sizes:
        chain.add(table.slice(at, size).combine_chunks().to_batches()[0])
        at += size
        heads[at] = chain.head().hex().encode()
    if flip is not None:
        rows = table.to_pylist()
        raw = bytearray(rows[flip]["payload"])
        raw[0] ^= 1
        rows[flip]["payload"] = bytes(raw)
        table = pa.Table.from_pylist(rows, schema=table.schema)
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, reader.schema) as writer:
        at = 0
        for i, size in enumerate(sizes):
            custom = {b"head": heads[at + size]} if i in marked else None
            writer.write_batch(table.slice(at, size).combine_chunks().to_batches()[0],
                               custom_metadata=custom)
            at += size
        writer.write_batch(end, custom_metadata=footer)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize(("sizes", "marked", "flip"), [
    ([9000, 11000], {0, 1}, None),
    ([9000, 11000], {1}, 8500),  # one part of 8192 unchecked, then a part across both
    ([20000], {0}, 100),  # a batch longer than a part: compared at its end only
    ([5000, 5000, 10000], {2}, 19000),
    ([5000, 5000, 10000], {0, 1, 2}, 7000),
    ([3000, 17000], set(), 3),  # no checkpoint: the end record's value alone
])
def test_batches_cut_anywhere_get_the_verdict_their_messages_get(
        tmp_path: Path, sizes: list[int], marked: set[int], flip: int | None) -> None:
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=4000)
    for i in range(20000):
        writer.record(round=i // 100, phase="p", sender="a", receiver="b", tag="t",
                      payload=np.full(2, float(i)))
    writer.close()
    path = tmp_path / "cut.arrow"
    path.write_bytes(resaved((tmp_path / "t.arrow").read_bytes(), sizes, marked, flip))
    loaded, reference = read_transcript(path), decoded(path)
    report = loaded.verify()
    assert report == reference.verify()
    assert report.ok == (flip is None)


def test_a_file_of_every_format_is_checked_from_its_batches(tmp_path: Path) -> None:
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=4)
    record(writer, 30)
    writer.close()
    from fedsec.transcript.damage import rechain

    for version in ("1", "2", "3"):
        data = rechain((tmp_path / "t.arrow").read_bytes(), version, "reseal",
                       np.random.default_rng(0))  # re-chained whole: intact in that format
        path = tmp_path / f"v{version}.arrow"
        path.write_bytes(data)
        loaded, reference = read_transcript(path), decoded(path)
        assert loaded.format_version == version
        assert_same_messages(loaded.messages, reference.messages)
        assert loaded.verify() == reference.verify() and loaded.verify().ok
        assert replace(loaded, format_version="4").verify() == replace(
            reference, format_version="4").verify()


def test_metadata_not_as_written_is_checked_from_the_messages(tmp_path: Path) -> None:
    """A file whose metadata is valid JSON but not canonical is read, and its chain checked
    from the messages (whose metadata is written canonically: the same, here) as it always
    was."""
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow")
    record(writer, 6)
    writer.close()
    reader = ipc.open_file(pa.py_buffer((tmp_path / "t.arrow").read_bytes()))
    batch, custom = reader.get_batch_with_custom_metadata(0)
    rows = batch.to_pylist()
    rows[1]["meta"] = json.dumps({"i": 1})  # '{"i": 1}', with a space
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, reader.schema) as out:
        out.write_batch(pa.RecordBatch.from_pylist(rows, schema=reader.schema),
                        custom_metadata=custom)
        out.write_batch(*reader.get_batch_with_custom_metadata(1))
    (tmp_path / "edited.arrow").write_bytes(sink.getvalue().to_pybytes())
    loaded = read_transcript(tmp_path / "edited.arrow")
    assert isinstance(loaded.messages, ColumnMessages) and not loaded.messages.as_written
    assert loaded.messages[1].meta == {"i": 1}
    assert loaded.verify() == decoded(tmp_path / "edited.arrow").verify()
    assert loaded.verify().ok
