"""The check of a batch from its columns accepts and refuses exactly what the check message by
message does, with the same error; a batch it calls as written gives its own bytes back."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.transcript.arrow_format import bare_schema
from fedsec.transcript.batch_chain import BatchChain
from fedsec.transcript.batch_check import check_batch
from fedsec.transcript.batch_fields import Damage, checked_columns, messages_of
from fedsec.transcript.message import canonical_json
from fedsec.transcript.payload import encode
from fedsec.transcript.sink import to_batch

SCHEMA = bare_schema("4")


def row(**change: Any) -> dict[str, Any]:
    """A message's row of a format-4 batch (8 floats), with fields changed."""
    values: dict[str, Any] = {
        "seq": 0, "round": 0, "phase": "main", "sender": "a", "receiver": "b", "tag": "t",
        "kind": "array", "protection": "plain", "key_id": "", "payload_dtype": "<f8",
        "payload_shape": [8], "wire_bytes": 64, "payload": np.arange(8.0).tobytes(),
        "meta": "{}", "elapsed": 0.0, "crypto_seconds": 0.0}
    return {**values, **change}


def batch_of(rows: list[dict[str, Any]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([{**r, "seq": i} for i, r in enumerate(rows)],
                                      schema=SCHEMA)


def verdicts(batch: pa.RecordBatch) -> tuple[tuple[str, Any], tuple[str, Any]]:
    """What each check makes of ``batch``: ("ok", as written) or ("damage", message)."""
    def one(check: Any) -> tuple[str, Any]:
        try:
            return "ok", check(batch, 5, "4")
        except Damage as error:
            return "damage", str(error)
    by_columns = one(check_batch)
    by_messages = one(checked_columns)
    return by_columns, ("ok", None) if by_messages[0] == "ok" else by_messages


ROWS = {
    "array": row(),
    "0-d": row(payload_shape=[], payload=np.float64(2.0).tobytes()),
    "empty": row(payload_shape=[0, 3], payload=b""),
    "bytes": row(kind="bytes", payload_dtype="", payload_shape=[], payload=b"ct"),
    "empty bytes": row(kind="bytes", payload_dtype="", payload_shape=[], payload=b""),
    "bool": row(payload_dtype="|b1", payload_shape=[2, 2], payload=b"\x00\x01\x02\x03"),
    "bytes with a dtype": row(kind="bytes", payload_dtype="<f8", payload_shape=[],
                              payload=b"ct"),
    "bytes with a shape": row(kind="bytes", payload_dtype="", payload_shape=[2],
                              payload=b"ct"),
    "unknown kind": row(kind="blob"),
    "big-endian dtype": row(payload_dtype=">f8"),
    "no dtype": row(payload_dtype=""),
    "33 dimensions": row(payload_shape=[1] * 32 + [8]),
    "32 dimensions": row(payload_shape=[1] * 31 + [8]),
    "negative dimensions": row(payload_shape=[-2, -4]),
    "too few bytes": row(payload_shape=[9]),
    "2**64 elements": row(payload_shape=[2**32, 2**32], payload=b""),
    "2**64 bytes": row(payload_shape=[2**61], payload=b""),
    "2**66 elements of 0 bytes": row(payload_shape=[2**33, 2**33, 0, 4], payload=b""),
    "huge times zero": row(payload_shape=[2**62] * 31 + [0], payload=b""),
    "metadata": row(meta='{"a":1,"b":[true,null,"x"]}'),
    "metadata out of order": row(meta='{"b":1,"a":2}'),
    "metadata with spaces": row(meta='{"a": 1}'),
    "metadata twice": row(meta='{"a":1,"a":2}'),
    "metadata not an object": row(meta="[1]"),
    "metadata not JSON": row(meta="{nope"),
    "metadata NaN": row(meta='{"x":NaN}'),
    "metadata too large a float": row(meta='{"x":1e999}'),
    "metadata too deep": row(meta="[" * 100_000 + "]" * 100_000),
    "missing timing": row(elapsed=None),
    "missing payload": row(payload=None),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_both_checks_agree_on_each_layout_and_metadata(name: str) -> None:
    batch = batch_of([row(), row(kind="bytes", payload_dtype="", payload_shape=[],
                                 payload=b"x"), ROWS[name], row()])
    by_columns, by_messages = verdicts(batch)
    assert by_columns[0] == by_messages[0]
    if by_columns[0] == "damage":  # the same message, naming the same message
        assert by_columns == by_messages
        assert "message 7 " in by_columns[1] or name == "missing payload"


def test_only_canonical_complete_batches_count_as_written() -> None:
    assert check_batch(batch_of([ROWS["array"], ROWS["metadata"]]), 0) is True
    for name in ("metadata out of order", "metadata with spaces", "metadata twice",
                 "metadata too large a float", "missing timing"):
        assert check_batch(batch_of([row(), ROWS[name]]), 0) is False, name


payloads = st.one_of(
    st.binary(max_size=12),
    st.tuples(st.sampled_from(["<f8", "<i4", "|u1", "|b1", "<c16"]),
              st.lists(st.integers(0, 3), max_size=3)).map(
        lambda spec: np.zeros(spec[1], dtype=spec[0])))
damage = st.sampled_from([
    {}, {}, {"kind": "blob"}, {"kind": "bytes"}, {"kind": "array"}, {"payload_dtype": ""},
    {"payload_dtype": "<f4"}, {"payload_dtype": "<u2"}, {"payload_shape": []},
    {"payload_shape": [1]}, {"payload_shape": [-1]}, {"payload_shape": [2, 0]},
    {"payload": b""}, {"payload": b"\x00" * 8}, {"meta": "[]"}, {"meta": '{"k":0.5}'},
    {"meta": '{"k" :1}'}, {"meta": ""}])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(payloads, st.dictionaries(st.sampled_from("ab"), st.integers(),
                                                   max_size=2), damage),
                min_size=1, max_size=6))
def test_both_checks_agree_on_any_batch(items: list[tuple[Any, dict, dict]]) -> None:
    rows = []
    for payload, meta, change in items:
        kind, dtype, shape, raw = encode(payload)
        fields = {"kind": kind, "payload_dtype": dtype, "payload_shape": list(shape),
                  "payload": raw, "wire_bytes": len(raw), "meta": canonical_json(meta)}
        rows.append(row(**{**fields, **change}))
    batch = batch_of(rows)
    by_columns, by_messages = verdicts(batch)
    assert by_columns[0] == by_messages[0]
    if by_columns[0] == "damage":
        assert by_columns == by_messages
    elif by_columns[1]:  # as written: its messages written back hash as the batch does
        messages = messages_of(checked_columns(batch, 0, "4"))
        again = to_batch([(m, encode(m.payload)[3]) for m in messages], SCHEMA)
        one, two = BatchChain("{}"), BatchChain("{}")
        one.add(batch)
        two.add(again)
        assert one.head() == two.head()
