"""Damage done to transcript files on purpose: the mutations fedsec's reader is fuzzed with.

Two families. **Byte damage** (what storage, copies and careless tools do): a flipped bit, an
overwritten byte, bytes inserted or deleted, a cut, a span copied over another. **Edits** (what
a person with pyarrow does): the file is read, one recorded value is changed (a payload byte,
a message's metadata, its round, the header, the end record), a message is dropped or two are
swapped, and the file is written again as a valid Arrow file, without recomputing the chain.
Every edit changes chained content, so a reader must report it; byte damage may hit what the
chain does not cover (timings, batch checkpoints, padding), and then leaves the record intact.

Used by the property test of the reader (the default suite) and by the campaign in
``tests/benchmarks/transcript_fuzz.py``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from hashlib import sha256

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.message import canonical_json
from fedsec.transcript.payload import encode
from fedsec.transcript.transcript import Transcript

BYTE_DAMAGE = ("flip", "overwrite", "insert", "delete", "truncate", "copy_span")
EDITS = ("edit_payload", "edit_meta", "edit_round", "edit_header", "edit_footer", "drop_message",
         "swap_messages")
MUTATIONS = BYTE_DAMAGE + EDITS


def mutate(data: bytes, kind: str, rng: np.random.Generator) -> bytes:
    """``data`` (a transcript file's bytes) after one mutation of ``kind``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> len(mutate(b"abcdef", "truncate", rng)) < 6
    True
    """
    if kind in BYTE_DAMAGE:
        return _BYTES[kind](bytearray(data), rng)
    if kind in EDITS:
        return _edit(data, kind, rng)
    raise ValueError(f"unknown mutation {kind!r}; expected one of {MUTATIONS}")


def _flip(b: bytearray, rng: np.random.Generator) -> bytes:
    i = int(rng.integers(len(b)))
    b[i] ^= 1 << int(rng.integers(8))
    return bytes(b)


def _overwrite(b: bytearray, rng: np.random.Generator) -> bytes:
    i = int(rng.integers(len(b)))
    b[i] = int(rng.choice([0, 0xFF, 0x7F, 0x80, int(rng.integers(256))]))
    return bytes(b)


def _insert(b: bytearray, rng: np.random.Generator) -> bytes:
    i = int(rng.integers(len(b) + 1))
    return bytes(b[:i] + rng.bytes(int(rng.integers(1, 17))) + b[i:])


def _delete(b: bytearray, rng: np.random.Generator) -> bytes:
    i = int(rng.integers(len(b)))
    return bytes(b[:i] + b[i + int(rng.integers(1, 17)):])


def _truncate(b: bytearray, rng: np.random.Generator) -> bytes:
    return bytes(b[:int(rng.integers(len(b)))])


def _copy_span(b: bytearray, rng: np.random.Generator) -> bytes:
    n = int(rng.integers(1, 65))
    src, dst = (int(x) for x in rng.integers(0, max(1, len(b) - n), 2))
    b[dst:dst + n] = b[src:src + n]
    return bytes(b)


_BYTES: dict[str, Callable[[bytearray, np.random.Generator], bytes]] = {
    "flip": _flip, "overwrite": _overwrite, "insert": _insert, "delete": _delete,
    "truncate": _truncate, "copy_span": _copy_span,
}


def _edit(data: bytes, kind: str, rng: np.random.Generator) -> bytes:
    """Read the file with pyarrow, change one recorded value, write a valid file again."""
    reader = ipc.open_file(pa.py_buffer(data))
    schema = reader.schema
    batches = [reader.get_batch_with_custom_metadata(i) for i in range(reader.num_record_batches)]
    rows = [(i, r) for i, (batch, _) in enumerate(batches) for r in range(batch.num_rows)]
    if kind == "edit_header":
        header = json.loads(schema.metadata[fmt.HEADER_KEY])
        header["edited"] = True
        metadata = dict(schema.metadata)
        metadata[fmt.HEADER_KEY] = json.dumps(header).encode()
        schema = schema.with_metadata(metadata)
    elif kind == "edit_footer":
        end, custom = batches[-1]
        footer = json.loads(custom[fmt.FOOTER_KEY])
        footer["status"] = "aborted" if footer.get("status") == "complete" else "complete"
        footer.pop("error", None)
        batches[-1] = (end, {fmt.FOOTER_KEY: json.dumps(footer).encode()})
    elif rows:
        b, r = rows[int(rng.integers(len(rows)))]
        table = batches[b][0].to_pylist()
        if kind == "edit_payload" and table[r]["payload"]:
            raw = bytearray(table[r]["payload"])
            raw[int(rng.integers(len(raw)))] ^= 0x01
            table[r]["payload"] = bytes(raw)
        elif kind == "edit_meta":
            meta = json.loads(table[r]["meta"])
            meta["edited"] = True
            table[r]["meta"] = json.dumps(meta)
        elif kind == "edit_round":
            table[r]["round"] += 1
        elif kind == "drop_message":
            del table[r]
        elif kind == "swap_messages" and len(table) > 1:
            other = (r + 1) % len(table)
            table[r], table[other] = table[other], table[r]
        else:  # an empty payload or a single-row batch: change the tag instead
            table[r]["tag"] += "x"
        batches[b] = (pa.RecordBatch.from_pylist(table, schema=schema), batches[b][1])
    sink = io.BytesIO()
    with ipc.new_file(sink, schema) as writer:
        for batch, custom in batches:
            writer.write_batch(batch.replace_schema_metadata(schema.metadata),
                               custom_metadata=custom)
    return sink.getvalue()


def fingerprint(transcript: Transcript) -> str:
    """A digest of everything the chain covers (header, messages but their timings, the end
    record's status, count and error): equal fingerprints, equal chained content."""
    h = sha256(canonical_json(dict(transcript.header)).encode())
    for m in transcript.messages:
        fields = (m.seq, m.round, m.phase, m.sender, m.receiver, m.tag, m.kind, m.protection,
                  m.key_id, m.dtype, list(m.shape), m.size, m.meta_json)
        h.update(json.dumps(fields).encode() + b"\x1e" + encode(m.payload)[3] + b"\x1d")
    footer = dict(transcript.footer or {})
    h.update(canonical_json({k: footer.get(k) for k in ("status", "n_messages", "error")})
             .encode())
    return h.hexdigest()
