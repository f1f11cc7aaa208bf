"""Fixed-point encodings, packing, masks and envelopes (property tests)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fedsec.backends import envelope, prg
from fedsec.backends.fixed_point import (
    check_range,
    decode_z64,
    encode_z64,
    pack,
    slot_width,
    unpack,
    z64_bound,
)
from fedsec.backends.mask_terms import apply_masks, merge_terms, pair_key_id, pairwise_terms
from fedsec.errors import TranscriptError, ValidationError

floats = st.floats(min_value=-1000.0, max_value=1000.0, allow_nan=False)
vectors = hnp.arrays(np.float64, st.integers(0, 40), elements=floats)


@settings(max_examples=80, deadline=None)
@given(vectors, st.integers(8, 40))
def test_z64_round_trip_within_quantization(values: np.ndarray, f: int) -> None:
    back = decode_z64(encode_z64(values, f), f)
    assert np.all(np.abs(back - values) <= 2.0 ** -(f + 1) + 1e-12 * np.abs(values))


@settings(max_examples=60, deadline=None)
@given(st.lists(hnp.arrays(np.float64, 7, elements=floats), min_size=1, max_size=12))
def test_z64_sums_wrap_and_come_back(parts: list[np.ndarray]) -> None:
    f = 30
    words = np.sum([encode_z64(p, f) for p in parts], axis=0, dtype=np.uint64)
    np.testing.assert_allclose(decode_z64(words, f), np.sum(parts, axis=0),
                               atol=len(parts) * 2.0**-f)


@settings(max_examples=60, deadline=None)
@given(st.lists(hnp.arrays(np.float64, 9, elements=floats), min_size=1, max_size=6),
       st.integers(1, 5))
def test_packed_sums_unpack_to_the_sum(parts: list[np.ndarray], slots: int) -> None:
    opts = {"fraction_bits": 20, "integer_bits": 11, "headroom_bits": 3, "slots": slots}
    packed = [pack(p, **opts) for p in parts]
    total = [sum(column) for column in zip(*packed, strict=True)]
    back = unpack(total, 9, n_summands=len(parts), **opts)
    np.testing.assert_allclose(back, np.sum(parts, axis=0), atol=len(parts) * 2.0**-20)


def test_packing_refuses_values_beyond_their_bits() -> None:
    with pytest.raises(ValidationError, match="integer bits"):
        pack(np.array([5000.0]), fraction_bits=8, integer_bits=4, headroom_bits=2, slots=1)
    with pytest.raises(ValidationError, match="exceeds the encoding's bound"):
        check_range(np.array([1.0, -9.0]), 8.0, what="x")
    with pytest.raises(ValidationError, match="finite"):
        check_range(np.array([np.nan]), 8.0, what="x")
    assert slot_width(36, 17) == 54
    assert z64_bound(36, 1024) == 2.0**17
    with pytest.raises(ValidationError, match="finite"):
        pack(np.array([np.inf]), fraction_bits=8, integer_bits=4, headroom_bits=2, slots=1)


@pytest.mark.parametrize("fraction_bits", [36, 47, 60, 100])
def test_packing_is_exact_beyond_64_bit_integers(fraction_bits: int) -> None:
    # 65,536 with 47 fraction bits is 2**63: int64 wrapped it to -65,533 once
    values = np.array([65536.0, -65536.0, 0.5, 1e-3])
    kw = {"fraction_bits": fraction_bits, "integer_bits": 17, "headroom_bits": 4, "slots": 2}
    back = unpack(pack(values, **kw), 4, n_summands=1, **kw)
    np.testing.assert_allclose(back, values, atol=2.0**-fraction_bits)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7), st.integers(1, 30), st.text(min_size=1, max_size=10))
def test_pairwise_masks_cancel_in_the_sum(n: int, length: int, nonce: str) -> None:
    senders = [f"s{i}" for i in range(n)]
    keys = {pair_key_id(senders[i], senders[j]): prg.simulation_key(0, f"{i}/{j}")
            for i in range(n) for j in range(i + 1, n)}
    rng = np.random.default_rng(n * 100 + length)
    values = rng.normal(size=(n, length))
    masked = [apply_masks(encode_z64(values[i], 30), pairwise_terms(s, senders, nonce), keys)
              for i, s in enumerate(senders)]
    assert all(np.any(m != encode_z64(values[i], 30)) for i, m in enumerate(masked))
    total = np.sum(masked, axis=0, dtype=np.uint64)
    np.testing.assert_allclose(decode_z64(total, 30), values.sum(axis=0), atol=n * 2.0**-30)
    assert merge_terms(*(pairwise_terms(s, senders, nonce) for s in senders)) == {}


def test_masks_depend_on_key_and_nonce() -> None:
    a = prg.mask_words(b"a" * 32, "n1", 64)
    assert not np.array_equal(a, prg.mask_words(b"b" * 32, "n1", 64))
    assert not np.array_equal(a, prg.mask_words(b"a" * 32, "n2", 64))
    # uniform-looking: every byte value appears in 64 words of output
    assert len(np.unique(a.view(np.uint8))) > 200


def test_agreement_gives_both_ends_one_key() -> None:
    sk_a, pk_a = prg.agreement_keypair()
    sk_b, pk_b = prg.agreement_keypair()
    assert prg.agreed_key(sk_a, pk_b, "ctx") == prg.agreed_key(sk_b, pk_a, "ctx")
    assert prg.agreed_key(sk_a, pk_b, "ctx") != prg.agreed_key(sk_a, pk_b, "other")


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.integers(-5, 5), max_size=4), st.binary())
def test_envelope_round_trips(header: dict, body: bytes) -> None:
    assert envelope.unwrap(envelope.wrap(header, body)) == (header, body)


def test_envelope_refuses_foreign_bytes() -> None:
    with pytest.raises(TranscriptError, match="magic"):
        envelope.unwrap(b"XXXX\x01\x00\x00\x00\x00")
    with pytest.raises(TranscriptError, match="version"):
        envelope.unwrap(b"FSEC\x09\x00\x00\x00\x00")


@settings(max_examples=30, deadline=None)
@given(st.binary(min_size=32, max_size=32), st.text(max_size=12), st.integers(1, 70))
def test_mask_stream_is_standard_aes_ctr(key: bytes, nonce: str, n: int) -> None:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    iv = prg.nonce_prefix(nonce).to_bytes(8, "big") + bytes(8)
    reference = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(bytes(8 * n))
    assert prg.mask_words(key, nonce, n).tobytes() == reference
