"""A batch's traffic counted from its columns equals the count of its messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.cost import Tally
from fedsec.transcript.arrow_format import bare_schema
from fedsec.transcript.message import Message
from fedsec.transcript.payload import encode
from fedsec.transcript.sink import to_batch
from fedsec.transcript.traffic import count_batch

PARTIES = ("a", "b", "c", "agg")
ROW = st.tuples(st.sampled_from(PARTIES), st.sampled_from(PARTIES), st.integers(0, 3),
                st.sampled_from(("setup", "train")), st.sampled_from(("x", "y", "z")),
                st.integers(0, 5000), st.sampled_from((0.0, 0.0, 0.25, 1.5)))


def message(i: int, row: tuple) -> Message:
    sender, receiver, round_, phase, tag, size, crypto = row
    payload = np.arange(2.0)
    kind, dtype, shape, _ = encode(payload)
    return Message(i, round_, phase, sender, receiver, tag, kind, "plain", "", dtype, shape,
                   payload, size, {}, 0.0, crypto, b"")


@pytest.mark.parametrize("version", ["3", "4"])
@settings(max_examples=80, deadline=None)
@given(rows=st.lists(ROW, max_size=40))
def test_columns_count_like_messages(version: str, rows: list[tuple]) -> None:
    messages = [message(i, row) for i, row in enumerate(rows)]
    if version == "3":
        messages = [m._replace(digest=bytes(32)) for m in messages]
    by_messages, by_columns = Tally(), Tally()
    by_messages.add(messages)
    count_batch(by_columns, to_batch([(m, encode(m.payload)[3]) for m in messages],
                                     bare_schema(version)))
    expected, got = by_messages.summary(), by_columns.summary()
    assert got.keys() == expected.keys()
    for section in expected:
        assert _rounded(got[section]) == _rounded(expected[section]), section


def _rounded(value: object) -> object:
    """Sums of seconds in another order differ in their last bits."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return round(value, 9) if isinstance(value, float) else value


def test_a_missing_timing_counts_as_none() -> None:
    import pyarrow as pa

    messages = [message(i, ("a", "b", 0, "setup", "x", 10, 0.5)) for i in range(3)]
    batch = to_batch([(m, encode(m.payload)[3]) for m in messages], bare_schema("4"))
    at = batch.schema.get_field_index("crypto_seconds")
    holed = batch.set_column(at, "crypto_seconds", pa.array([0.5, None, 0.5]))
    tally = Tally()
    count_batch(tally, holed)
    assert tally.total == {"messages": 3, "bytes": 30}
