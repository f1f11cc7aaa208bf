"""Saving a whole transcript again: :func:`write_transcript` writes one held in memory (or read
back) to a file that :func:`~fedsec.transcript.reader.read_transcript` gives back exactly."""

from __future__ import annotations

import os

from fedsec.transcript.batch_chain import BATCH_FORMATS, BatchChain
from fedsec.transcript.message import Message, canonical_json
from fedsec.transcript.payload import encode
from fedsec.transcript.sink import ArrowSink, to_batch
from fedsec.transcript.transcript import Transcript


def write_transcript(transcript: Transcript, path: str | os.PathLike[str]) -> None:
    """Write a transcript to ``path`` atomically; :func:`read_transcript` gives it back exactly."""
    version = transcript.format_version
    header_json = canonical_json(dict(transcript.header))
    sink = ArrowSink(path, header_json, version)
    chain = BatchChain(header_json, version) if version in BATCH_FORMATS else None

    def write(rows: list[tuple[Message, bytes]]) -> None:
        batch = to_batch(rows, sink.schema)
        if chain is None:  # every message carries its chain value
            sink.write_batch(batch, rows[-1][0].seq + 1, rows[-1][0].digest)
            return
        chain.add(batch)
        sink.write_batch(batch, chain.n, chain.head())

    try:
        rows: list[tuple[Message, bytes]] = []
        for message in transcript.messages:
            rows.append((message, encode(message.payload)[3]))
            if len(rows) >= 8192:
                write(rows)
                rows = []
        if rows:
            write(rows)
        sink.finish(transcript.footer or {"status": "unknown"})
    except BaseException:
        sink.discard()
        raise
