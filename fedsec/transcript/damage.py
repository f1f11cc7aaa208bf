"""Damage done to transcript files on purpose: the mutations fedsec's reader is fuzzed with.

Two families. **Byte damage** (what storage, copies and careless tools do): a flipped bit, an
overwritten byte, bytes inserted or deleted, a cut, a span copied over another. **Edits** (what
a person with pyarrow does): the file is read, one recorded value is changed (a payload byte,
a message's metadata, its round, the header, the end record), a message is dropped or two are
swapped, and the file is written again as a valid Arrow file, without recomputing the chain.
Every edit changes chained content, so a reader must report it; byte damage may hit what the
chain does not cover (timings, batch checkpoints, padding), and then leaves the record intact.
**Downgrades** (what a forger does): a payload is edited and the whole file re-chained, as
anyone can, as format 1, 2 or 3, keeping the original footer's seal (``end``), signature and
signer; the seal no longer matches the chain, so a reader must report it too.
:func:`rechain` makes the stronger forgeries, which only a signature detects (the seal dropped
or recomputed): :data:`FORGERIES` names them.

Used by the property test of the reader (the default suite) and by the campaign in
``tests/benchmarks/transcript_fuzz.py``.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.batch_chain import BATCH_FORMATS, BatchChain
from fedsec.transcript.message import NO_DIGEST, canonical_json, genesis, link, seal
from fedsec.transcript.payload import decode, encode
from fedsec.transcript.transcript import Transcript

BYTE_DAMAGE = ("flip", "overwrite", "insert", "delete", "truncate", "copy_span")
DOWNGRADES = ("downgrade_1", "downgrade_2", "downgrade_3")
EDITS = ("edit_payload", "edit_meta", "edit_round", "edit_header", "edit_footer", "drop_message",
         "swap_messages", *DOWNGRADES)
MUTATIONS = BYTE_DAMAGE + EDITS
#: Re-chained forgeries as ``(format, what becomes of the seal)``: ``keep`` the original's,
#: ``drop`` it (what a format 1 or 2 file looks like) or ``reseal`` (recompute it). Only a
#: signature detects those that drop or recompute the seal.
FORGERIES = tuple((version, end) for version in ("1", "2", "3", "4")
                  for end in ("keep", "drop", "reseal"))


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
    if kind in DOWNGRADES:
        return rechain(data, kind.rsplit("_", 1)[1], "keep", rng)
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


def rechain(data: bytes, version: str, end: str, rng: np.random.Generator) -> bytes:
    """``data`` (a finished transcript file) with one payload byte changed, re-chained from
    scratch as format ``version`` (as anyone can: the algorithm is open), its footer's status,
    count, signature and signer kept; the seal ``end`` kept (``"keep"``), removed
    (``"drop"``) or recomputed (``"reseal"``)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.arrow"
        path.write_bytes(data)
        from fedsec.transcript.reader import read_transcript

        original = read_transcript(path)
        messages = list(original.messages)
        editable = [i for i, m in enumerate(messages) if len(encode(m.payload)[3])]
        if editable:
            i = editable[int(rng.integers(len(editable)))]
            kind, dtype, shape, raw = encode(messages[i].payload)
            flipped = bytearray(raw)
            flipped[int(rng.integers(len(flipped)))] ^= 0x01
            messages[i] = messages[i]._replace(payload=decode(kind, dtype, shape,
                                                              bytes(flipped)))
        elif messages:
            messages[0] = messages[0]._replace(tag=messages[0].tag + "x")
        header_json = canonical_json(dict(original.header))
        if version in BATCH_FORMATS:
            from fedsec.transcript.sink import to_batch

            messages = [m._replace(digest=NO_DIGEST) for m in messages]
            chain = BatchChain(header_json, version)
            if messages:
                chain.add(to_batch([(m, encode(m.payload)[3]) for m in messages],
                                   fmt.bare_schema(version)))
            head = chain.head()
        else:
            head = genesis(header_json, version)
            for j, m in enumerate(messages):
                head = link(head, m.seq, m.round, m.phase, m.sender, m.receiver, m.tag, m.kind,
                            m.protection, m.key_id, m.dtype, m.shape, m.size, m.meta_json,
                            encode(m.payload)[3], version)
                messages[j] = m._replace(digest=head)
        footer = dict(original.footer or {})
        footer["head"] = head.hex()
        if end == "drop":
            footer.pop("end", None)
        elif end == "reseal":
            footer["end"] = seal(head, footer, version).hex()
        forged = Transcript(header=original.header, messages=tuple(messages), footer=footer,
                            format_version=version)
        forged.save(path)
        return path.read_bytes()


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
