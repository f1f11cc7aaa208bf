"""Refusals, capability checks and backend-specific guarantees."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.backends import envelope
from fedsec.backends.primitives import secure_sum
from fedsec.errors import CapabilityError, ValidationError
from fedsec.interfaces import check_operations
from fedsec.registry import create

FAST_PAILLIER = {"key_bits": 1024, "insecure_test_keys": True}


def test_capability_mismatch_names_operation_and_backends() -> None:
    with pytest.raises(CapabilityError) as info:
        check_operations(create("backend", "noise"), {"mul_plain_elementwise", "add"},
                         who="Protocol 'demo'")
    message = str(info.value)
    assert "'mul_plain_elementwise' (available in: ckks, plain)" in message
    assert "noise" in message


@pytest.mark.parametrize(("name", "params", "needle"), [
    ("paillier", {"key_bits": 1024}, "3072 (the default, about 128-bit security)"),
    ("paillier", {"key_bits": 128, "insecure_test_keys": True}, "int >= 256"),
    ("ckks", {"poly_modulus_degree": 4096}, "at most 109 bits at poly_modulus_degree=4096"),
    ("ckks", {"coeff_mod_bit_sizes": "60,40,40,60,60,60"}, "at most 218 bits"),
    ("ckks", {"poly_modulus_degree": 3000}, "one of 1024, 2048"),
    ("ckks", {"scale_bits": 50}, "'scale_bits' parameter"),
    ("ckks", {"max_abs": 2.0**19}, "larger values do not decrypt"),
    ("noise", {"max_abs": 2.0**40}, "so that sums fit in 64 bits"),
    ("noise", {"key_source": "dice"}, "'simulation', 'agreement'"),
])
def test_insecure_or_inconsistent_parameters_are_refused(name, params, needle) -> None:
    with pytest.raises(ValidationError) as info:
        create("backend", name, params)
    assert needle in str(info.value)


def test_values_beyond_the_declared_range_are_refused(federation_factory) -> None:
    federation = federation_factory(2)
    for name in ("noise", "ckks"):
        with pytest.raises(ValidationError, match="exceeds the encoding's bound"):
            secure_sum(federation, create("backend", name),
                       {"p00": np.array([1e7]), "p01": np.array([1.0])}, "agg")


def run_paillier(federation_factory, n: int = 3, length: int = 40):
    federation = federation_factory(n)
    backend = create("backend", "paillier", FAST_PAILLIER)
    rng = np.random.default_rng(3)
    vectors = {f"p{i:02d}": rng.normal(size=length) for i in range(n)}
    total = secure_sum(federation, backend, vectors, "agg")
    return federation, backend, vectors, total


def test_paillier_wire_format_pins_the_exponent_and_fixes_widths(federation_factory) -> None:
    federation, backend, _, _ = run_paillier(federation_factory)
    transcript = federation.network.close()
    width = 2 * (1024 // 8)
    for m in transcript.select(tag="secure_sum.contribution"):
        header, body = envelope.unwrap(m.payload)
        assert m.meta["exponent"] == -backend.packing.fraction_bits == header["exponent"]
        assert len(body) == header["ciphertexts"] * width
        assert header["ciphertexts"] == -(-40 // backend.packing.slots)


def test_paillier_aggregate_is_rerandomised_before_it_leaves(federation_factory) -> None:
    import gmpy2

    federation, _, _, _ = run_paillier(federation_factory)
    transcript = federation.network.close()
    contributions = transcript.select(tag="secure_sum.contribution")
    request = transcript.select(tag="reveal.request")[0]
    n2 = None
    product = None
    for m in contributions:
        header, body = envelope.unwrap(m.payload)
        cts = [int.from_bytes(body[i:i + 256], "big") for i in range(0, len(body), 256)]
        if n2 is None:
            public = transcript.select(tag="key.hold", key_id=f"{header['key_id']}:public")[0]
            n = int.from_bytes(public.payload, "big")
            n2 = n * n
            product = [1] * len(cts)
        product = [int(gmpy2.f_mod(a * b, n2)) for a, b in zip(product, cts, strict=True)]
    _, body = envelope.unwrap(request.payload)
    sent = [int.from_bytes(body[i:i + 256], "big") for i in range(0, len(body), 256)]
    assert sent != product  # same plaintext, fresh randomness


def test_paillier_operations_and_overflow_checks(federation_factory) -> None:
    federation = federation_factory(1)
    backend = create("backend", "paillier", {**FAST_PAILLIER, "headroom_bits": 2})
    context = backend.setup(federation, senders=["p00"], receiver="agg", mode="direct")
    x = np.array([1.5, -2.0, 0.25])
    a = backend.protect(context, "p00", x, nonce="n")
    doubled = backend.mul_plain(backend.add_plain(a, np.array([1.0, 1.0, 1.0])), 2)
    np.testing.assert_allclose(backend.reveal(federation, context, doubled), 2 * (x + 1))
    with pytest.raises(CapabilityError, match="positive integers"):
        backend.mul_plain(a, -1)
    with pytest.raises(CapabilityError, match="mul_plain_elementwise"):
        backend.mul_plain(a, np.ones(3))
    with pytest.raises(CapabilityError, match="headroom"):
        backend.sum([a] * 5)  # 5 summands > 2**2


def test_ckks_tracks_error_and_refuses_beyond_its_budgets(federation_factory) -> None:
    federation = federation_factory(1)
    backend = create("backend", "ckks")
    context = backend.setup(federation, senders=["p00"], receiver="agg", mode="direct")
    x = np.random.default_rng(0).normal(size=5000)
    a = backend.protect(context, "p00", x, nonce="n")
    assert len(a.data) == 2  # 5,000 values in chunks of 4,096 slots
    summed = backend.sum([a, a, a])
    scaled = backend.mul_plain(summed, 0.5)
    both = backend.mul_plain(scaled, np.full(5000, 2.0))
    for value, expected in ((summed, 3 * x), (scaled, 1.5 * x), (both, 3 * x)):
        error = np.max(np.abs(backend.reveal(federation, context, value) - expected))
        assert error <= value.info["error_bound"], (error, value.info["error_bound"])
    with pytest.raises(CapabilityError, match="depth budget"):
        backend.mul_plain(both, 2.0)
    with pytest.raises(CapabilityError, match="beyond the"):
        backend.mul_plain(a, 1e4)


def test_noise_refuses_what_masks_cannot_survive(federation_factory) -> None:
    federation = federation_factory(2)
    backend = create("backend", "noise", {"max_summands": 2})
    context = backend.setup(federation, senders=["p00", "p01"], receiver="agg")
    a = backend.protect(context, "p00", np.ones(3), nonce="n")
    with pytest.raises(CapabilityError, match="integers only"):
        backend.mul_plain(a, 0.5)
    with pytest.raises(CapabilityError, match="still masked"):
        backend.reveal(federation, context, a)
    with pytest.raises(CapabilityError, match="max_summands"):
        backend.reveal(federation, context, backend.mul_plain(a, 3))


def test_a_test_sized_paillier_key_is_marked_insecure_whatever_its_source() -> None:
    from fedsec import registry

    small = registry.create("backend", "paillier", {"key_bits": 512, "insecure_test_keys": True,
                                                    "key_source": "secrets"}).describe()
    assert small["insecure_key_size"] is True and small["insecure_simulation_keys"] is False
    full = registry.create("backend", "paillier", {"key_source": "secrets"}).describe()
    assert full["insecure_key_size"] is False
