"""Shamir sharing over GF(p) and the sealing of shares: the invariants their docstrings state."""

from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.backends import sealing, shamir
from fedsec.errors import CapabilityError


def _is_prime(n: int) -> bool:
    """Miller-Rabin with the first twelve primes as bases (a proof below 3.3e24; for larger n
    a composite passes with probability below 4**-12)."""
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    if n < 2 or any(n % b == 0 for b in bases):
        return n in bases
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in bases:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def test_the_field_is_prime_and_holds_every_32_byte_secret() -> None:
    assert _is_prime(shamir.PRIME)
    assert shamir.PRIME > 2**256
    assert not any(_is_prime(2**256 + k) for k in range(1, 297))  # the smallest above 2**256


@settings(max_examples=60, deadline=None)
@given(secret=st.integers(0, shamir.PRIME - 1), threshold=st.integers(1, 6),
       extra=st.integers(0, 4), data=st.data())
def test_any_threshold_shares_rebuild_the_secret(secret, threshold, extra, data) -> None:
    xs = list(range(1, threshold + extra + 1))
    coefficients = shamir.random_coefficients(threshold - 1, os.urandom)
    shares = shamir.split(secret, threshold, xs, coefficients)
    chosen = data.draw(st.lists(st.sampled_from(range(len(xs))), min_size=threshold,
                                max_size=len(xs), unique=True))
    assert shamir.reconstruct([xs[i] for i in chosen], [shares[i] for i in chosen]) == secret


@settings(max_examples=40, deadline=None)
@given(prime=st.sampled_from([5, 7, 11]), threshold=st.integers(2, 3), data=st.data())
def test_fewer_than_threshold_shares_reveal_nothing(prime, threshold, data) -> None:
    """Over every choice of the random coefficients, the shares at any t - 1 points take every
    value exactly once, whatever the secret: their distribution does not depend on it."""
    points = data.draw(st.lists(st.integers(1, prime - 1), min_size=threshold,
                                max_size=threshold, unique=True))
    every = sorted(itertools.product(range(prime), repeat=threshold - 1))
    for secret in range(prime):
        seen = sorted(tuple(shamir.split(secret, threshold, points, list(c), prime=prime)[1:])
                      for c in itertools.product(range(prime), repeat=threshold - 1))
        assert seen == every


@settings(max_examples=40, deadline=None)
@given(secret=st.binary(min_size=32, max_size=32), data=st.data())
def test_a_32_byte_key_round_trips_through_its_shares(secret, data) -> None:
    coefficients = shamir.random_coefficients(2, os.urandom)
    xs = [3, 8, 9, 20]
    shares = shamir.split(shamir.secret_from_bytes(secret), 3, xs, coefficients)
    chosen = data.draw(st.permutations(range(4)))[:3]
    rebuilt = shamir.reconstruct([xs[i] for i in chosen], [shares[i] for i in chosen])
    assert shamir.secret_to_bytes(rebuilt) == secret
    assert all(len(shamir.to_bytes(s)) == shamir.SHARE_BYTES for s in shares)


def test_bad_points_and_thresholds_are_refused() -> None:
    with pytest.raises(ValueError, match="distinct, non-zero"):
        shamir.split(1, 2, [0, 1], [5])
    with pytest.raises(ValueError, match="distinct, non-zero"):
        shamir.split(1, 2, [2, 2], [5])
    with pytest.raises(ValueError, match="cannot meet a threshold"):
        shamir.split(1, 3, [1, 2], [5, 6])
    with pytest.raises(ValueError, match="needs 1 random"):
        shamir.split(1, 2, [1, 2], [])
    with pytest.raises(ValueError, match="32-byte secret"):
        shamir.secret_to_bytes(2**256)
    with pytest.raises(ValueError, match="16-byte secret"):
        shamir.secret_to_bytes(2**128, 16)


def test_random_coefficients_are_field_elements() -> None:
    values = shamir.random_coefficients(200, os.urandom, prime=7)
    assert set(values) == set(range(7))


def _route(label: str = "r1", dealer: str = "a", holder: str = "b"):
    dealer_key = sealing.private_key(os.urandom(32))
    holder_material = os.urandom(32)
    shared = sealing.shared_secret(dealer_key,
                                   sealing.public_bytes(sealing.private_key(holder_material)))
    key = sealing.direction_key(shared, label, dealer, holder)
    return dealer_key, holder_material, key


def test_a_sealed_record_opens_with_the_holders_key_only() -> None:
    dealer_key, holder_material, key = _route()
    record = sealing.share_record(4, 2**256 + 1, 17)
    sealed = sealing.seal(key, record, sealing.associated_data("r1", "a", "b"))
    meta = {"round": "r1", "from": ["a"], "to": ["b"],
            "sender_keys": [sealing.public_bytes(dealer_key).hex()]}
    opened = sealing.open_records(sealed, meta, {"noise:secagg:r1:seal:b": holder_material})
    assert opened == [("a", "b", record)]
    assert sealing.parse_record(opened[0][2]) == (4, 2**256 + 1, 17)
    assert sealing.open_records(sealed, meta, {"noise:secagg:r1:seal:c": os.urandom(32)}) == []
    with pytest.raises(CapabilityError, match="does not open"):
        sealing.open_records(sealed, meta, {"noise:secagg:r1:seal:b": os.urandom(32)})
    rerouted = {**meta, "to": ["c"]}
    with pytest.raises(CapabilityError, match="does not open"):
        sealing.open_records(sealed, rerouted, {"noise:secagg:r1:seal:c": holder_material})
