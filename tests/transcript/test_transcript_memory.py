"""A transcript streamed to disk keeps no message in memory: it is read back lazily from the
file, its chunks are reused, and what it counted as it wrote equals a count of the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fedsec.cost import Tally, summarize
from fedsec.errors import TranscriptError
from fedsec.transcript import TranscriptWriter, read_transcript
from fedsec.transcript.log import MessageLog
from fedsec.transcript.rows import RecordedMessages
from fedsec.transcript.sink import DiskWriter

HEADER = {"protocol": "memory-test"}


def record(writer: TranscriptWriter, n: int, length: int) -> list[np.ndarray]:
    sent = []
    for i in range(n):
        payload = np.full(length, float(i))
        sent.append(payload)
        writer.record(round=i // 10, phase="train", sender=f"p{i % 3}", receiver="server",
                      tag="t.x", payload=payload, meta={"i": i} if i % 2 else None,
                      crypto_seconds=0.001 * (i % 2))
    return sent


def test_a_file_backed_run_is_read_back_lazily_and_equals_the_file(tmp_path: Path) -> None:
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=7)
    sent = record(writer, 40, 700)  # several batches, arrays above the small-payload size
    transcript = writer.close()
    log = transcript.messages
    assert isinstance(log, MessageLog) and len(log) == 40
    with pytest.raises(TranscriptError, match="keeps no messages"):
        _ = writer.messages
    assert [m.payload[0] for m in log] == [float(i) for i in range(40)]
    assert log[-1].seq == 39 and log[13].meta == {"i": 13}
    assert [m.seq for m in log[5:9]] == [5, 6, 7, 8]
    loaded = read_transcript(tmp_path / "t.arrow")
    assert [m.digest for m in log] == [m.digest for m in loaded.messages]
    assert transcript.verify().ok
    assert np.array_equal(log[3].payload, sent[3]) and not log[3].payload.flags.writeable


@pytest.mark.parametrize(("flush_rows", "on_disk"), [(5, True), (100, True), (100, False)])
def test_what_the_writer_counted_equals_a_count_of_the_file(tmp_path: Path, flush_rows: int,
                                                             on_disk: bool) -> None:
    # on disk counted by messages, then by columns; in memory from the rows when asked
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow" if on_disk else None,
                              flush_rows=flush_rows)
    record(writer, 230, 10)
    transcript = writer.close()
    assert writer.tally is not None
    assert writer.tally.summary() == summarize(transcript.messages)


def test_an_in_memory_transcript_builds_the_messages_a_file_holds(tmp_path: Path) -> None:
    memory, disk = TranscriptWriter(HEADER), TranscriptWriter(HEADER, tmp_path / "t.arrow")
    sent = record(memory, 25, 3)[4]
    record(disk, 25, 3)
    kept, streamed = memory.close().messages, disk.close().messages
    assert isinstance(kept, RecordedMessages) and len(kept) == 25
    assert kept[4].payload is memory.messages[4].payload  # the very value the receiver got
    assert np.array_equal(kept[4].payload, sent) and not kept[4].payload.flags.writeable
    assert kept[-1].seq == 24 and kept[13].meta == {"i": 13} and kept[12].meta == {}
    assert [m.seq for m in kept[3:9:2]] == [3, 5, 7] and kept[-2:][0].seq == 23
    with pytest.raises(IndexError):
        _ = kept[25]
    for a, b in zip(kept, streamed, strict=True):  # everything but the timings
        assert a._replace(payload=None, elapsed=0.0) == b._replace(payload=None, elapsed=0.0)
        assert np.array_equal(a.payload, b.payload)


def test_recording_keeps_nothing_the_garbage_collector_walks() -> None:
    """Each kept message would be walked again at every full collection: the writer keeps
    rows the collector stops tracking."""
    import gc

    writer = TranscriptWriter(HEADER)
    record(writer, 10, 2)  # the first batch's lists exist already
    gc.collect()
    before = len(gc.get_objects())
    for i in range(5000):
        writer.record(round=0, phase="train", sender="a", receiver="b", tag="t.x",
                      payload=np.full(3, float(i)))
    gc.collect()
    assert len(gc.get_objects()) - before < 100
    assert len(writer.close().messages) == 5010


def test_a_receiver_gets_its_own_payload(tmp_path: Path) -> None:
    for path in (None, tmp_path / "t.arrow"):
        writer = TranscriptWriter(HEADER, path)
        for length in (4, 5000, 300_000):  # small, mid-size, a batch of its own
            payload = np.arange(float(length))
            got = writer.record(round=0, phase="p", sender="a", receiver="b", tag="t.x",
                                payload=payload)
            payload[:] = -1.0  # the sender changes its array afterwards
            assert got[1] == 1.0 and not got.flags.writeable
        writer.close()


def test_a_batch_of_bytes_is_joined_and_a_lone_payload_used_as_it_is() -> None:
    from fedsec.transcript.arena import pack

    parts = [bytes([i]) * 40_000 for i in range(60)]  # 2.4 MB of bytes: joined
    assert pack(parts).to_pybytes() == b"".join(parts)
    import pyarrow as pa

    assert pack(parts[:1]).address == pa.py_buffer(parts[0]).address  # no copy


def test_recorded_arrays_reach_the_disk_thread_as_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each receiver's copy is bytes, so the disk thread joins a batch with bytes.join (which
    lets the interpreter lock go while it copies) instead of copying payload by payload."""
    from fedsec.transcript import sink

    kinds: set[type] = set()
    original = sink.pack

    def seen(raws: list):  # type: ignore[no-untyped-def]
        kinds.update(map(type, raws))
        return original(raws)

    monkeypatch.setattr(sink, "pack", seen)
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow", flush_rows=16)
    for i in range(200):  # small, mid-size and large arrays, 8 MB in all
        writer.record(round=0, phase="p", sender="a", receiver="b", tag="t.x",
                      payload=np.full((i % 3) * 5_000 + 4, float(i)))
    writer.record(round=0, phase="p", sender="a", receiver="b", tag="t.x",
                  payload=np.ones(40_000))  # a batch of its own
    transcript = writer.close()
    assert kinds == {bytes}
    assert transcript.verify().ok and len(transcript.messages) == 201
    assert transcript.messages[5].payload.tolist() == [5.0] * 10_004


def test_the_disk_thread_bounds_what_waits_to_be_written(tmp_path: Path) -> None:
    import threading

    from fedsec.transcript.batch_chain import BatchChain
    from fedsec.transcript.sink import ArrowSink

    sink = ArrowSink(tmp_path / "t.arrow", "{}")
    released = threading.Event()
    write = sink.write_batch
    sink.write_batch = lambda *args: (released.wait(10), write(*args))  # type: ignore[method-assign]
    disk = DiskWriter(sink, BatchChain("{}"), Tally(), max_in_flight=1000)
    disk.start()
    submitted: list[int] = []

    def producer() -> None:
        for i in range(3):
            disk.submit([], [], 0, 600)
            submitted.append(i)

    thread = threading.Thread(target=producer)
    thread.start()
    thread.join(0.5)
    assert submitted == [0]  # the disk is stuck: the second batch would pass 1000 bytes
    released.set()
    thread.join(10)
    assert submitted == [0, 1, 2]
    disk.inbox.put(None)
    disk.join()
    assert disk._in_flight == 0 and disk.error is None
