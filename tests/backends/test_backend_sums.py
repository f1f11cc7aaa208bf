"""secure_sum and masked_send under every backend, against the plaintext result."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.backends.primitives import masked_send, secure_sum
from fedsec.registry import create
from fedsec.views import build_view

# Paillier at full size (2048/3072 bits) takes about 40 s for ten 10,000-float vectors on two
# cores; the acceptance sum here uses 1024-bit keys, behind the explicit test flag, because the
# arithmetic is identical and only the modulus length differs. Full sizes run in
# tests/benchmarks/bench_backends.py.
FAST_PAILLIER = {"key_bits": 1024, "insecure_test_keys": True}
BACKENDS = [("plain", {}, 1e-12), ("noise", {}, 1e-9), ("paillier", FAST_PAILLIER, 1e-9),
            ("ckks", {}, 1e-6)]
#: The same at scale; Paillier's 10,000 encryptions take 12 s, so they run with the slow tests.
AT_SCALE = [pytest.param(*b, marks=pytest.mark.slow) if b[0] == "paillier" else b
            for b in BACKENDS]


@pytest.mark.parametrize(("name", "params", "rtol"), AT_SCALE)
def test_secure_sum_of_ten_10000_float_vectors(federation_factory, name, params, rtol) -> None:
    federation = federation_factory(10)
    rng = np.random.default_rng(7)
    vectors = {f"p{i:02d}": rng.normal(scale=10.0, size=10_000) for i in range(10)}
    total = secure_sum(federation, create("backend", name, params), vectors, "agg")
    expected = np.sum(list(vectors.values()), axis=0)
    assert np.max(np.abs(total - expected)) <= rtol * np.max(np.abs(expected))
    transcript = federation.network.close()
    assert transcript.verify().ok
    contributions = transcript.select(tag="secure_sum.contribution")
    assert len(contributions) == 10
    assert {m.protection for m in contributions} == {name}


@pytest.mark.parametrize(("name", "params", "rtol"), BACKENDS)
def test_aggregator_learns_the_sum_but_opens_no_contribution(federation_factory, name, params,
                                                             rtol) -> None:
    federation = federation_factory(4)
    rng = np.random.default_rng(1)
    vectors = {f"p{i:02d}": rng.normal(size=50) for i in range(4)}
    secure_sum(federation, create("backend", name, params), vectors, "agg")
    private = federation.knowledge()
    transcript = federation.network.close()
    view = build_view(transcript, "agg", private)
    contributions = view.select(tag="secure_sum.contribution")
    opened = [view.can_open(m) for m in contributions]
    assert all(opened) if name == "plain" else not any(opened)


@pytest.mark.parametrize(("name", "params"), [(n, p) for n, p, _ in BACKENDS])
def test_masked_send_reaches_only_the_designated_receiver(federation_factory, name,
                                                          params) -> None:
    federation = federation_factory(2, extra=("eve",))
    labels = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    got = masked_send(federation, create("backend", name, params), "p00", "agg", labels,
                      tag="test.labels")
    np.testing.assert_allclose(got, labels, atol=1e-6)
    private = federation.knowledge()
    transcript = federation.network.close()
    message = transcript.select(tag="test.labels")[0]
    eavesdropper = build_view(transcript, "eavesdropper:p00->agg", private)
    receiver = build_view(transcript, "agg", private)
    assert eavesdropper.can_open(message) is (name == "plain")
    if name != "ckks":  # CKKS: the receiver is the key holder, checked through open below
        assert receiver.can_open(message)
    np.testing.assert_allclose(receiver.open(message), labels, atol=1e-6)


def test_pairwise_masks_open_only_for_all_partners_together(federation_factory) -> None:
    federation = federation_factory(4)
    vectors = {f"p{i:02d}": np.full(5, float(i + 1)) for i in range(4)}
    secure_sum(federation, create("backend", "noise"), vectors, "agg")
    private = federation.knowledge()
    transcript = federation.network.close()
    target = transcript.select(tag="secure_sum.contribution", sender="p00")[0]
    assert not build_view(transcript, "agg,p01,p02", private).can_open(target)
    everyone_else = build_view(transcript, "agg,p01,p02,p03", private)
    np.testing.assert_allclose(everyone_else.open(target), vectors["p00"], atol=1e-9)


def test_noise_key_agreement_runs_through_the_network(federation_factory) -> None:
    federation = federation_factory(3)
    vectors = {f"p{i:02d}": np.arange(4.0) * i for i in range(3)}
    total = secure_sum(federation, create("backend", "noise", {"key_source": "agreement"}),
                       vectors, "agg")
    np.testing.assert_allclose(total, np.arange(4.0) * 3, atol=1e-9)
    transcript = federation.network.close()
    exchanges = transcript.select(tag="key.agreement")
    assert len(exchanges) == 6 and all(len(m.payload) == 32 for m in exchanges)
    assert not transcript.select(tag="key.share")  # nothing secret crossed the wire


@pytest.mark.parametrize(("name", "params"), [("noise", {}), ("paillier", FAST_PAILLIER)])
def test_simulation_keys_give_identical_transcripts(federation_factory, name, params) -> None:
    digests = []
    for _ in range(2):
        federation = federation_factory(3, seed=11)
        vectors = {f"p{i:02d}": np.linspace(0, 1, 8) + i for i in range(3)}
        secure_sum(federation, create("backend", name, params), vectors, "agg")
        digests.append(federation.network.close().footer["head"])
    assert digests[0] == digests[1]
    backend = create("backend", name, params)
    assert backend.caps.deterministic and backend.describe()["insecure_simulation_keys"]


def test_ckks_declares_itself_non_deterministic() -> None:
    caps = create("backend", "ckks").caps
    assert not caps.deterministic and caps.slots == 4096 and caps.depth == 2 and not caps.exact


def test_paillier_with_operating_system_keys_differs_between_runs(federation_factory) -> None:
    heads = []
    for _ in range(2):
        federation = federation_factory(3, seed=5)
        vectors = {f"p{i:02d}": np.linspace(-1, 1, 6) * i for i in range(3)}
        backend = create("backend", "paillier", {**FAST_PAILLIER, "key_source": "secrets"})
        total = secure_sum(federation, backend, vectors, "agg")
        np.testing.assert_allclose(total, np.linspace(-1, 1, 6) * 3, atol=1e-9)
        heads.append(federation.network.close().footer["head"])
        assert not backend.describe()["insecure_simulation_keys"]
    assert heads[0] != heads[1]


def test_ckks_flooding_adds_noise_to_what_the_key_holder_returns(federation_factory) -> None:
    rng = np.random.default_rng(3)
    vectors = {f"p{i:02d}": rng.normal(size=2000) for i in range(3)}
    expected = np.sum(list(vectors.values()), axis=0)
    plain = secure_sum(federation_factory(3), create("backend", "ckks", {}), vectors, "agg")
    federation = federation_factory(3)
    flooded = secure_sum(federation, create("backend", "ckks", {"flood_bits": 12}), vectors,
                         "agg")
    result = next(m for m in federation.network.close().messages if "flood_sigma" in m.meta)
    sigma = result.meta["flood_sigma"]
    assert sigma > 0 and result.meta["error_bound"] * 2**12 == pytest.approx(sigma)
    assert np.max(np.abs(plain - expected)) < sigma
    assert np.std(flooded - expected) == pytest.approx(sigma, rel=0.1)
