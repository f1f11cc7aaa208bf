"""No file crashes the reader, and no edit of chained content passes: a property test over
every kind of damage (:mod:`fedsec.transcript.damage`), and the forgeries an auditor worries
about (an aborted run made complete, a cut file given a new end record, a header that differs
between the file's two copies, a transcript swapped beside its result)."""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.transcript import STATUSES, TranscriptWriter, check_file, read_transcript
from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.damage import EDITS, MUTATIONS, fingerprint, mutate

HEADER = {"protocol": {"name": "demo"}, "parties": {"a": "client", "b": "server"}, "seed": 1}


@cache
def small_transcript() -> bytes:
    """Eight messages over three batches: arrays of several dtypes, bytes, metadata."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.arrow"
        writer = TranscriptWriter(HEADER, path, flush_rows=3)
        rng = np.random.default_rng(0)
        payloads = [rng.normal(size=(3, 2)), np.arange(5, dtype=np.int32), b"ciphertext",
                    np.array(True), rng.normal(size=40), np.zeros(0), b"", np.uint8(7)]
        for i, payload in enumerate(payloads):
            writer.record(round=i // 3, phase="main", sender="a" if i % 2 else "b",
                          receiver="b" if i % 2 else "a", tag=f"t{i % 3}", payload=payload,
                          meta={"i": i, "note": "x" * i} if i % 2 else None)
        writer.close()
        return path.read_bytes()


def verdict_of(data: bytes, tmp: Path) -> tuple[str, str | None]:
    path = tmp / "t.arrow"
    path.write_bytes(data)
    verdict = check_file(path)
    return verdict.status, None if verdict.transcript is None else fingerprint(
        verdict.transcript)


@settings(max_examples=400, deadline=None)
@given(kind=st.sampled_from(MUTATIONS), seed=st.integers(0, 2**32 - 1))
def test_every_damaged_file_gets_a_clean_verdict(kind: str, seed: int) -> None:
    original = small_transcript()
    with tempfile.TemporaryDirectory() as tmp:
        _, intact = verdict_of(original, Path(tmp))
        status, seen = verdict_of(mutate(original, kind, np.random.default_rng(seed)),
                                  Path(tmp))
        # the streaming check (nothing decoded, the file not mapped) of the same file
        streamed = check_file(Path(tmp) / "t.arrow", keep_messages=False, traffic=True).status
    assert status in STATUSES
    assert streamed == status
    if status == "intact":  # only what the chain does not cover may have changed
        assert seen == intact and kind not in EDITS


def test_the_original_is_intact(tmp_path: Path) -> None:
    assert verdict_of(small_transcript(), tmp_path)[0] == "intact"


def footer_edited(data: bytes, change: dict[str, object], drop_last: int = 0) -> bytes:
    """The file rewritten by pyarrow with the end record changed (and messages dropped)."""
    reader = ipc.open_file(pa.py_buffer(data))
    batches = [reader.get_batch_with_custom_metadata(i) for i in range(reader.num_record_batches)]
    end, custom = batches.pop()
    table = pa.Table.from_batches([b for b, _ in batches]).combine_chunks()
    kept = table.slice(0, table.num_rows - drop_last)
    footer = json.loads(custom[fmt.FOOTER_KEY])
    footer.update(change)
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, reader.schema) as writer:
        for batch in kept.to_batches():
            writer.write_batch(batch)
        writer.write_batch(end, custom_metadata={fmt.FOOTER_KEY: json.dumps(footer).encode()})
    return sink.getvalue().to_pybytes()


def test_an_aborted_run_cannot_be_made_complete(tmp_path: Path) -> None:
    writer = TranscriptWriter(HEADER, tmp_path / "a.arrow")
    writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=np.ones(2))
    writer.abort(RuntimeError("boom"))
    data = (tmp_path / "a.arrow").read_bytes()
    assert verdict_of(data, tmp_path)[0] == "aborted"
    forged = footer_edited(data, {"status": "complete", "error": None})
    status, _ = verdict_of(forged, tmp_path)
    assert status == "tampered"
    assert "status, message count or error was edited" in check_file(tmp_path / "t.arrow") \
        .summary()


def test_a_cut_file_with_a_copied_end_record_is_tampered(tmp_path: Path) -> None:
    data = small_transcript()
    kept = read_transcript_bytes(data, tmp_path).messages[:-2]
    forged = footer_edited(data, {"n_messages": len(kept), "head": kept[-1].digest.hex()},
                           drop_last=2)
    assert verdict_of(forged, tmp_path)[0] == "tampered"


def read_transcript_bytes(data: bytes, tmp: Path):  # type: ignore[no-untyped-def]
    (tmp / "r.arrow").write_bytes(data)
    return read_transcript(tmp / "r.arrow")


def test_a_header_that_differs_between_its_two_copies_is_tampered(tmp_path: Path) -> None:
    data = small_transcript()
    old, new = b'"seed":1', b'"seed":2'
    assert data.count(old) == 2  # the stream's schema at the start, the index's at the end
    forged = data.replace(old, new, 1)
    status, _ = verdict_of(forged, tmp_path)
    assert status == "tampered"
    assert "differs from the copy" in check_file(tmp_path / "t.arrow").summary()


def test_a_transcript_swapped_beside_its_result_is_tampered(tmp_path: Path) -> None:
    path = tmp_path / "transcript.arrow"
    path.write_bytes(small_transcript())
    footer = read_transcript(path).footer
    assert footer is not None
    result = {"transcript": {"file": path.name, "head": footer["head"],
                             "messages": footer["n_messages"]}}
    (tmp_path / "result.json").write_text(json.dumps(result))
    assert check_file(path).status == "intact"
    result["transcript"]["head"] = "00" * 32
    (tmp_path / "result.json").write_text(json.dumps(result))
    verdict = check_file(path)
    assert verdict.status == "tampered" and "result.json" in verdict.summary()


@pytest.mark.parametrize("content", [b"", b"ARROW1", b"ARROW1\x00\x00" + b"\xff" * 64,
                                     b"\x00" * 4096])
def test_junk_is_not_a_transcript(tmp_path: Path, content: bytes) -> None:
    assert verdict_of(content, tmp_path)[0] == "not-a-transcript"


def test_transcripts_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    writer = TranscriptWriter(HEADER, tmp_path / "t.arrow")
    writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=np.ones(2))
    assert (tmp_path / "t.arrow.partial").stat().st_mode & 0o777 == 0o600
    writer.close()
    assert (tmp_path / "t.arrow").stat().st_mode & 0o777 == 0o600
