"""Transcript columns built from buffers equal what pyarrow.array builds."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedsec.errors import TranscriptError
from fedsec.transcript.columns import column

INT64 = st.integers(-(2**63), 2**63 - 1)


@pytest.mark.parametrize(("values", "type_"), [
    ([], pa.int64()), ([], pa.string()), ([], pa.list_(pa.int64())),
    ([0, -1, 2**63 - 1], pa.int64()), ([3, 2**31 - 1], pa.int32()),
    ([0.5, -0.0, float("inf")], pa.float64()),
    (["", "tag.é", "κ"], pa.string()), ([(), (3, 4), (5,)], pa.list_(pa.int64())),
    ([b"\x00" * 32, bytes(range(32))], pa.binary(32)), ([], pa.binary(32)),
    ([b"", b"\x00\xff"], pa.large_binary()), ([], pa.large_binary()), ([b"ab"], pa.binary()),
])
def test_each_type_equals_pyarrow_array(values: list, type_: pa.DataType) -> None:
    built = column(values, type_)
    built.validate(full=True)
    assert built.equals(pa.array(values, type=type_))


@given(st.lists(st.text()), st.lists(st.lists(INT64, max_size=4)), st.lists(INT64))
def test_random_columns_equal_pyarrow_array(texts: list[str], shapes: list[list[int]],
                                            ints: list[int]) -> None:
    for values, type_ in ((texts, pa.string()), (shapes, pa.list_(pa.int64())),
                          (ints, pa.int64())):
        built = column(values, type_)
        built.validate(full=True)
        assert built.equals(pa.array(values, type=type_))


def test_values_that_do_not_fit_are_refused() -> None:
    with pytest.raises(OverflowError):
        column([2**31], pa.int32())
    with pytest.raises(TranscriptError, match="32 bytes"):
        column([b"short"], pa.binary(32))


@given(st.one_of(st.text(), st.binary()), st.lists(INT64, max_size=4), INT64,
       st.integers(2, 50))
def test_repeated_values_equal_pyarrow_array(text: str | bytes, shape: list[int], number: int,
                                             n: int) -> None:
    """A column repeating one value is built from that value alone (a batch's constant
    columns); it must still equal what pyarrow builds."""
    string_type = pa.string() if isinstance(text, str) else pa.binary()
    for values, type_ in (([text] * n, string_type), ([tuple(shape)] * n, pa.list_(pa.int64())),
                          ([number] * n, pa.int64()), ([0.0, -0.0] * n, pa.float64())):
        built = column(values, type_)
        built.validate(full=True)
        assert built.equals(pa.array(values, type=type_))
    with pytest.raises(OverflowError):
        column([2**31] * n, pa.int32())


def test_a_batch_from_fields_back_to_back_equals_one_from_rows() -> None:
    """The writer queues a batch's rows as their fields back to back in one list."""
    import itertools

    from fedsec.transcript.arrow_format import bare_schema
    from fedsec.transcript.rows import flat_batch, rows_batch

    rows = [(i // 3, "p", "ab"[i % 2], "ba"[i % 2], f"t{i % 4}", "array", "plain", "",
             "<f8", (i % 3,), 8 * (i % 3), "{}" if i % 2 else '{"i":1}', 0.5 * i, 0.0,
             None, 8 * (i % 3)) for i in range(10)]
    payloads = pa.py_buffer(bytes(sum(r[15] for r in rows)))
    flat = list(itertools.chain.from_iterable(rows))
    assert flat_batch(flat, 10, bare_schema("4"), payloads, 5).equals(
        rows_batch(rows, bare_schema("4"), payloads, 5))
