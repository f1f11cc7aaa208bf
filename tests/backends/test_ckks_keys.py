"""CKKS keys: one pair per key holder and receiver in a run, never a secret key held by another."""

from __future__ import annotations

import numpy as np

from fedsec.backends.primitives import masked_send, secure_sum
from fedsec.registry import create
from fedsec.views import build_view


def _secret_ckks_keys(federation) -> dict[str, set[str]]:
    """Per party, the secret CKKS keys it holds."""
    return {name: {k for k in party.keys.ids() if k.startswith("ckks:")
                   and not party.keys.is_public(k)}
            for name, party in federation.parties.items()}


def test_senders_to_one_receiver_share_its_key_and_the_receiver_alone_holds_it(
        federation_factory) -> None:
    federation = federation_factory(2, extra=("eve",))
    backend = create("backend", "ckks")
    values = {p: np.arange(5.0) + i for i, p in enumerate(("p00", "p01"))}
    for sender, vector in values.items():
        got = masked_send(federation, backend, sender, "agg", vector, tag="test.labels")
        np.testing.assert_allclose(got, vector, atol=1e-6)
    secret = _secret_ckks_keys(federation)
    assert len(secret["agg"]) == 1 and not secret["p00"] and not secret["p01"]
    (key_id,) = secret["agg"]
    for sender in values:  # each sender got the receiver's public key, once
        assert f"{key_id}:public" in federation.party(sender).keys
    private = federation.knowledge()
    transcript = federation.network.close()
    sent = transcript.select(tag="test.labels")
    assert {m.key_id for m in sent} == {key_id}
    assert len(transcript.select(tag="key.share")) == 2
    (hold,) = [m for m in transcript.select(tag="key.hold") if m.key_id == f"{key_id}:public"]
    assert hold.meta["relin_keys"] is False and len(hold.payload) < 600_000
    eve = build_view(transcript, "eavesdropper:p00->agg", private)
    assert not any(eve.can_open(m) for m in sent)
    receiver = build_view(transcript, "agg", private)
    for message, vector in zip(sent, values.values(), strict=True):
        np.testing.assert_allclose(receiver.open(message), vector, atol=1e-6)


def test_groups_with_other_key_holders_get_keys_of_their_own(federation_factory) -> None:
    federation = federation_factory(4)
    backend = create("backend", "ckks")
    first = {"p00": np.ones(3), "p01": np.full(3, 2.0)}
    second = {"p02": np.ones(3), "p03": np.full(3, 3.0)}
    np.testing.assert_allclose(secure_sum(federation, backend, first, "agg"), 3.0, atol=1e-6)
    np.testing.assert_allclose(secure_sum(federation, backend, second, "agg"), 4.0, atol=1e-6)
    masked_send(federation, backend, "p01", "agg", np.ones(2), tag="test.labels")
    secret = _secret_ckks_keys(federation)
    # the sums' key holders (the first sender of each) and the receiver of the direct send
    assert [len(secret[p]) for p in ("p00", "p01", "p02", "p03", "agg")] == [1, 0, 1, 0, 1]
    assert len(set().union(*secret.values())) == 3


def test_a_new_run_makes_new_keys(federation_factory) -> None:
    backend = create("backend", "ckks")
    federations = [federation_factory(2) for _ in range(2)]
    for federation in federations:
        masked_send(federation, backend, "p00", "agg", np.ones(2), tag="test.labels")
    held = [_secret_ckks_keys(federation)["agg"] for federation in federations]
    assert held[0] and held[1] and held[0] != held[1]
