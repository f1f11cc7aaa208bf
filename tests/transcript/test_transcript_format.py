"""Transcript recording, saving, loading and integrity checks."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fedsec.errors import TranscriptError, ValidationError
from fedsec.transcript import Transcript, TranscriptWriter, read_pandas, read_transcript
from fedsec.transcript.payload import decode, encode

HEADER = {"protocol": {"name": "demo"}, "parties": {"a": "client", "b": "server"}, "seed": 1}

dtypes = st.sampled_from(["<f8", "<f4", "<i8", "<i4", "<u1", "|b1", "<c16", ">f8", ">i4"])
arrays = dtypes.flatmap(lambda dt: hnp.arrays(
    np.dtype(dt), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)))
payloads = st.one_of(arrays, st.binary(max_size=64), st.integers(-(2**62), 2**62),
                     st.floats(allow_nan=False))
metas = st.dictionaries(st.text(min_size=1, max_size=8),
                        st.one_of(st.integers(-1000, 1000), st.text(max_size=8), st.booleans()),
                        max_size=3)


def record_demo(writer: TranscriptWriter, n: int = 5) -> None:
    for i in range(n):
        writer.record(round=i, phase="main", sender="a", receiver="b", tag="vector",
                      payload=np.arange(4.0) * i, meta={"i": i})


def same_payload(x: object, y: object) -> bool:
    if isinstance(x, np.ndarray):
        return (isinstance(y, np.ndarray) and x.shape == y.shape
                and x.dtype.newbyteorder("<") == y.dtype.newbyteorder("<")
                and np.array_equal(x, y, equal_nan=True))
    return x == y


@settings(max_examples=60, deadline=None)
@given(payloads)
def test_payload_encoding_round_trips(value: object) -> None:
    kind, dtype, shape, raw = encode(value)
    back = decode(kind, dtype, shape, raw)
    if isinstance(value, bytes):
        assert back == value
    else:
        expected = np.asarray(value)
        assert back.shape == expected.shape
        assert np.array_equal(back, expected, equal_nan=True)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(payloads, metas, st.integers(0, 5)), min_size=0, max_size=6))
def test_save_load_round_trips_exactly(tmp_path_factory: pytest.TempPathFactory,
                                       items: list) -> None:
    path = tmp_path_factory.mktemp("t") / "transcript.arrow"
    writer = TranscriptWriter(HEADER, path, flush_rows=2)
    for payload, meta, round_ in items:
        writer.record(round=round_, phase="p", sender="a", receiver="b", tag="t",
                      payload=payload, meta=meta)
    original = writer.close()
    loaded = read_transcript(path)
    assert dict(loaded.header) == HEADER
    assert loaded.footer == original.footer
    assert len(loaded) == len(original)
    for x, y in zip(original.messages, loaded.messages, strict=True):
        assert (x.seq, x.round, x.tag, x.digest, dict(x.meta), x.size) == (
            y.seq, y.round, y.tag, y.digest, dict(y.meta), y.size)
        assert same_payload(x.payload, y.payload)
    assert loaded.verify().ok


def test_delivered_arrays_are_read_only_copies() -> None:
    writer = TranscriptWriter(HEADER)
    sent = np.arange(3.0)
    got = writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=sent)
    sent[0] = 99.0
    assert got[0] == 0.0
    with pytest.raises(ValueError):
        got[0] = 1.0


def test_small_arrays_of_any_layout_are_recorded_as_encode_gives_them(tmp_path: Path) -> None:
    """A small array takes the recorder's inline path (a copy by ``tobytes``); whatever its
    layout, the receiver and the file get what :func:`encode` gives."""
    base = np.arange(24.0).reshape(4, 6)
    sent = [base[:, ::2], np.asfortranarray(base), base.T, np.float32(2.5), np.array(True),
            np.arange(6, dtype=np.int16)[::-1], np.zeros((0, 3)), base.astype(">f8")]
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow")
    got = [writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=x)
           for x in sent]
    writer.close()
    loaded = read_transcript(tmp_path / "t.arrow")
    for x, delivered, message in zip(sent, got, loaded.messages, strict=True):
        kind, dtype, shape, raw = encode(x)
        assert (message.kind, message.dtype, message.shape) == (kind, dtype, shape)
        assert delivered.dtype.str == dtype and delivered.shape == shape
        assert delivered.tobytes() == raw == message.payload.tobytes()
        assert not delivered.flags.writeable


def test_non_numeric_payload_is_refused() -> None:
    writer = TranscriptWriter(HEADER)
    with pytest.raises(ValidationError, match="numeric dtype"):
        writer.record(round=0, phase="p", sender="a", receiver="b", tag="t",
                      payload=np.array(["x"]))
    with pytest.raises(ValidationError, match="numpy array, a number or bytes"):
        writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload={"a": 1})


def test_pandas_reads_a_transcript_in_one_call(tmp_path: Path) -> None:
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow")
    record_demo(writer)
    writer.close()
    frame = pd.read_feather(tmp_path / "t.arrow")
    assert list(frame["seq"]) == [0, 1, 2, 3, 4]
    assert set(frame["tag"]) == {"vector"}
    assert read_pandas(tmp_path / "t.arrow").shape == frame.shape


def test_tampered_payload_is_detected(tmp_path: Path) -> None:
    # a batch per message: format 4 locates an edit to the batch that holds it
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=1)
    record_demo(writer)
    writer.close()
    data = bytearray((tmp_path / "t.arrow").read_bytes())
    needle = (np.arange(4.0) * 3).tobytes()
    at = bytes(data).index(needle)
    data[at + 8] ^= 0x01
    (tmp_path / "bad.arrow").write_bytes(bytes(data))
    report = read_transcript(tmp_path / "bad.arrow").verify()
    assert not report.ok
    assert report.status == "tampered"
    assert report.first_bad == 3


def test_reordering_is_detected() -> None:
    writer = TranscriptWriter(HEADER)
    record_demo(writer)
    t = writer.close()
    swapped = list(t.messages)
    swapped[1], swapped[2] = swapped[2], swapped[1]
    report = type(t)(header=t.header, messages=tuple(swapped), footer=t.footer).verify()
    assert report.status == "tampered" and report.first_bad == 1


def test_header_change_is_detected() -> None:
    writer = TranscriptWriter(HEADER)
    record_demo(writer)
    t = writer.close()
    forged = replace(t, header={**HEADER, "seed": 2})  # checkpoints kept
    assert forged.verify().first_bad == 0
    # without checkpoints, only the end record's chain value is left to compare
    bare = type(t)(header={**HEADER, "seed": 2}, messages=t.messages, footer=t.footer)
    report = bare.verify()
    assert report.status == "tampered" and "final chain value" in report.summary()


def test_truncated_file_leaves_readable_prefix(tmp_path: Path) -> None:
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=2)
    record_demo(writer, 7)
    writer.close()
    data = (tmp_path / "t.arrow").read_bytes()
    (tmp_path / "cut.arrow").write_bytes(data[:300])
    with pytest.raises(TranscriptError, match="before its header ends"):
        read_transcript(tmp_path / "cut.arrow")
    schema_end = 1200  # the schema message with the header comes first
    truncated = 0
    for cut in range(schema_end, len(data), 97):
        (tmp_path / "cut.arrow").write_bytes(data[:cut])
        t = read_transcript(tmp_path / "cut.arrow")
        report = t.verify()
        assert all(m.seq == i for i, m in enumerate(t.messages))
        if report.ok:  # only the Arrow footer was cut: every message and the end record remain
            assert len(t) == 7
        else:
            assert report.status == "truncated", report
            assert len(t) < 7 or t.footer is None
            truncated += 1
    assert truncated > 3


def test_dropped_tail_messages_are_detected() -> None:
    writer = TranscriptWriter(HEADER)
    record_demo(writer)
    t = writer.close()
    cut = type(t)(header=t.header, messages=t.messages[:3], footer=t.footer)
    report = cut.verify()
    assert report.status == "truncated" and "counts 5 messages but 3" in report.problems[0]


def read_prefix(partial: Path, n: int) -> Transcript:
    """The partial file once ``n`` messages are in it (a background thread writes batches)."""
    deadline = time.monotonic() + 10.0
    while True:
        try:
            transcript = read_transcript(partial)
            if len(transcript) >= n or time.monotonic() > deadline:
                return transcript
        except TranscriptError:  # nothing written yet
            if time.monotonic() > deadline:
                raise
        time.sleep(0.01)


def test_run_that_dies_leaves_partial_file_with_prefix(tmp_path: Path) -> None:
    path = tmp_path / "t.arrow"
    writer = TranscriptWriter(HEADER, path, flush_rows=2)
    record_demo(writer, 5)
    # the process dies here: no close(), the file stays under its temporary name
    partial = path.with_name(path.name + ".partial")
    assert not path.exists() and partial.exists()
    assert len(read_prefix(partial, 4)) == 4  # two full batches of two were flushed
    assert read_transcript(partial).verify().status == "truncated"


def test_aborted_run_is_reported(tmp_path: Path) -> None:
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow")
    record_demo(writer, 2)
    writer.abort(RuntimeError("boom"))
    report = read_transcript(tmp_path / "t.arrow").verify()
    assert report.status == "aborted" and "boom" in report.problems[0]


def test_not_a_transcript_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.arrow").write_bytes(b"hello world, not arrow")
    with pytest.raises(TranscriptError, match="not a fedsec transcript"):
        read_transcript(tmp_path / "x.arrow")
    with pytest.raises(TranscriptError, match="no such file"):
        read_transcript(tmp_path / "missing.arrow")
    (tmp_path / "y.arrow").write_bytes(b"ARROW1\x00\x00garbage")
    with pytest.raises(TranscriptError):
        read_transcript(tmp_path / "y.arrow")


def test_closed_writer_refuses_more() -> None:
    writer = TranscriptWriter(HEADER)
    writer.close()
    with pytest.raises(TranscriptError, match="closed"):
        writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=1)


def test_large_and_small_messages_interleave_in_order(tmp_path: Path) -> None:
    # payloads share batches up to a chunk's size; a payload larger than what is left starts
    # a new batch
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=3)
    writer._plan.chunk_bytes = 30_000  # small chunks: 40 kB payloads each get their own
    sent = []
    for i in range(40):
        payload = np.full(5000 if i % 3 == 0 else 2, float(i))
        sent.append(payload)
        writer.record(round=i, phase="p", sender="a", receiver="b", tag="t", payload=payload)
    memory = writer.close()
    loaded = read_transcript(tmp_path / "t.arrow")
    assert [m.seq for m in memory] == list(range(40)) == [m.seq for m in loaded]
    for message, payload in zip(loaded, sent, strict=True):
        np.testing.assert_array_equal(message.payload, payload)
    assert memory.verify().ok and loaded.verify().ok
    assert [m.digest for m in memory] == [m.digest for m in loaded]


def test_a_failed_write_is_reported_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fedsec.transcript import writer as writer_module

    def full_disk(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer_module.ArrowSink, "write_batch", full_disk)
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=1)
    writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=np.ones(4096))
    with pytest.raises(TranscriptError, match="No space left on device"):
        writer.close()
    with pytest.raises(TranscriptError, match="Writing the transcript failed"):
        writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=1.0)


def test_format_1_transcripts_are_still_read_and_verified(tmp_path: Path) -> None:
    from fedsec.transcript.message import Message, canonical_json, genesis, link
    from fedsec.transcript.payload import encode

    head = genesis(canonical_json(HEADER), "1")
    messages = []
    for i in range(3):
        kind, dtype, shape, raw = encode(np.arange(i + 1.0))
        head = link(head, i, 0, "p", "a", "b", "t", kind, "plain", "", dtype, shape, len(raw),
                    "{}", raw, "1")
        messages.append(Message(i, 0, "p", "a", "b", "t", kind, "plain", "", dtype, shape,
                                np.arange(i + 1.0), len(raw), {}, 0.0, 0.0, head))
    old = Transcript(header=HEADER, messages=tuple(messages),
                     footer={"status": "complete", "n_messages": 3, "head": head.hex()},
                     format_version="1")
    assert old.verify().ok
    old.save(tmp_path / "old.arrow")
    loaded = read_transcript(tmp_path / "old.arrow")
    assert loaded.format_version == "1" and loaded.verify().ok
    assert not replace(loaded, format_version="2").verify().ok


def test_file_order_holds_when_the_recording_thread_writes_too(tmp_path: Path) -> None:
    # batches are written by a background thread while recording goes on
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=4)
    for i in range(60):
        payload = np.full(3000 if i % 7 == 0 else 1, float(i))
        writer.record(round=i, phase="p", sender="a", receiver="b", tag="t", payload=payload)
        if i % 7 == 0:
            time.sleep(0.002)  # let the background thread link it and go idle
    writer.close()
    loaded = read_transcript(tmp_path / "t.arrow")
    assert [m.seq for m in loaded] == list(range(60))
    assert loaded.verify().ok


def test_payloads_spanning_many_growing_chunks_stay_intact(tmp_path: Path) -> None:
    # chunks double from 256 kB; from 4 MB on, the next one is prepared in the background
    rng = np.random.default_rng(5)
    sent = [rng.random(int(n)) for n in rng.integers(1, 90_000, size=60)]
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow")
    got = [writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=p)
           for p in sent]
    memory = writer.close()
    loaded = read_transcript(tmp_path / "t.arrow")
    for payload, delivered, a, b in zip(sent, got, memory, loaded, strict=True):
        np.testing.assert_array_equal(delivered, payload)
        np.testing.assert_array_equal(a.payload, payload)
        np.testing.assert_array_equal(b.payload, payload)
    assert sum(p.nbytes for p in sent) > 8 << 20
    assert memory.verify().ok and loaded.verify().ok


def test_pandas_columns_shadow_nothing_and_payloads_decode_with_one_helper(
        tmp_path: Path) -> None:
    from fedsec.transcript import payload_of

    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow")
    sent = [np.arange(6.0).reshape(2, 3), np.int32(7), b"ciphertext"]
    for payload in sent:
        writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=payload)
    writer.close()
    frame = read_pandas(tmp_path / "t.arrow")
    assert {"payload_dtype", "payload_shape", "wire_bytes"} <= set(frame.columns)
    assert not {"dtype", "shape", "size"} & set(frame.columns)
    assert frame.shape == (3, 16)  # the DataFrame's own attribute, not a column
    for (_, row), payload in zip(frame.iterrows(), sent, strict=True):
        assert same_payload(np.asarray(payload) if not isinstance(payload, bytes) else payload,
                            payload_of(row))
    # an older format reads under the same names; a cut file gives its readable prefix
    old = read_transcript(tmp_path / "t.arrow")
    replace(old, format_version="2", messages=tuple(m._replace(digest=bytes(32)) for m in old)
            ).save(tmp_path / "v2.arrow")  # (format 2 chains each message: it has digests)
    assert list(read_pandas(tmp_path / "v2.arrow").columns) == [*frame.columns, "digest"]
    data = (tmp_path / "t.arrow").read_bytes()
    (tmp_path / "cut.arrow").write_bytes(data[: len(data) // 2])
    assert list(read_pandas(tmp_path / "cut.arrow").columns) == list(frame.columns)
