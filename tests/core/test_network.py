"""Network delivery, recording, cost, and key sharing through the federation."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.cost import summarize
from fedsec.errors import CapabilityError, UnknownNameError, ValidationError
from fedsec.federation import Federation, Party
from fedsec.keys import KeyStore, fingerprint
from fedsec.network import Network
from fedsec.seeding import generator
from fedsec.transcript import TranscriptWriter
from fedsec.wire import Wire

ROLES = {"a": "client", "b": "client", "s": "server"}


def make_federation(seed: int = 0) -> Federation:
    network = Network(TranscriptWriter({"parties": ROLES}), ROLES)
    parties = {n: Party(name=n, role=r, shard=None, rng=generator(seed, n), keys=KeyStore(n))
               for n, r in ROLES.items()}
    return Federation(parties=parties, network=network, seed=seed, secret_seed=seed)


def test_send_broadcast_gather_record_one_message_per_link() -> None:
    fed = make_federation()
    net = fed.network
    with net.stage("up", round=1):
        got = net.gather({"a": np.ones(2), "b": np.zeros(2)}, "s", "vec")
    with net.stage("down", round=2):
        net.broadcast("s", ["a", "b"], "sum", np.ones(2))
    t = net.close()
    assert [(m.sender, m.receiver, m.tag, m.round, m.phase) for m in t.messages] == [
        ("a", "s", "vec", 1, "up"), ("b", "s", "vec", 1, "up"),
        ("s", "a", "sum", 2, "down"), ("s", "b", "sum", 2, "down"),
    ]
    assert got["a"].tolist() == [1.0, 1.0]
    assert net.round == 0 and net.phase == "setup"  # stage restores


def test_cost_by_party_round_phase_and_tag() -> None:
    fed = make_federation()
    net = fed.network
    with net.stage("up", round=0):
        net.send("a", "s", "vec", np.ones(4))  # 32 bytes
        net.send("b", "s", "vec", np.ones(2, dtype=np.float32))  # 8 bytes
    with net.compute("s"):
        sum(range(1000))
    cost = summarize(net.close().messages, net.compute_seconds())
    assert cost["total"] == {"messages": 2, "bytes": 40}
    assert cost["by_party"]["s"]["bytes_received"] == 40
    assert cost["by_party"]["a"]["bytes_sent"] == 32
    assert cost["by_tag"]["vec"]["messages"] == 2
    assert cost["by_round"]["0"]["bytes"] == 40
    assert cost["by_party"]["s"]["compute_seconds"] > 0
    assert cost["by_round"]["0"]["compute_seconds"] == cost["by_party"]["s"]["compute_seconds"]
    assert "compute_seconds" in cost["by_phase"]["setup"]


def test_unknown_party_and_bad_names_are_refused() -> None:
    net = make_federation().network
    with pytest.raises(UnknownNameError, match="Valid party names: a, b, s"):
        net.send("a", "zz", "vec", 1)
    with pytest.raises(ValidationError, match="not a valid name"):
        net.send("a", "s", "bad tag", 1)
    with pytest.raises(ValidationError, match="round"), net.stage("x", round=-1):
        pass


def test_wire_payload_keeps_its_protection() -> None:
    net = make_federation().network
    got = net.send("a", "s", "ct", Wire(b"\x01\x02", "paillier", "pk1", {"n": 1}))
    assert isinstance(got, Wire) and got.payload == b"\x01\x02"
    m = net.close().messages[0]
    assert (m.protection, m.key_id, dict(m.meta)) == ("paillier", "pk1", {"n": 1})


def test_secret_keys_travel_only_as_fingerprints() -> None:
    fed = make_federation()
    secret = bytes(range(32))
    fed.share_key("a", "pair/a+b", secret, to=["b"])
    t = fed.network.close()
    assert "pair/a+b" in fed.party("b").keys and "pair/a+b" not in fed.party("s").keys
    for m in t.messages:
        assert m.payload != secret
        assert m.payload.hex() == fingerprint(secret)
    share = t.select(tag="key.share")[0]
    assert share.size == 32 and share.protection == "secret"
    assert summarize(t.messages)["total"]["messages"] == 1  # the owner's own record is not traffic


def test_keystore_refuses_conflicts_and_missing_keys() -> None:
    ks = KeyStore("a")
    ks.put("k", b"1")
    with pytest.raises(ValidationError, match="already holds a different key"):
        ks.put("k", b"2")
    with pytest.raises(CapabilityError, match="does not hold key 'other'"):
        ks.get("other")


def test_same_seed_same_party_streams() -> None:
    a, b = make_federation(3), make_federation(3)
    assert a.party("a").rng.random() == b.party("a").rng.random()
    assert make_federation(4).party("a").rng.random() != make_federation(3).party("a").rng.random()


@pytest.mark.parametrize(("backend", "tag"), [("noise", "key.agreement"),
                                              ("paillier", "key.share")])
def test_a_key_swapped_in_transit_fails_the_run(monkeypatch: pytest.MonkeyPatch, backend: str,
                                                tag: str) -> None:
    """Keys delivered through the network are the keys used: a man in the middle who swaps
    one shows up as a failed run, not as an exchange the computation ignores."""
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    from fedsec.runner import RunConfig, run

    intruder = X25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw,
                                                                     PublicFormat.Raw)
    send = Network.send

    def swapping(self: Network, sender: str, receiver: str, tag_: str, payload: object,
                 **options: object) -> object:
        if tag_ == tag and sender != receiver:
            payload = intruder[:len(payload)] if isinstance(payload, bytes) else payload
        return send(self, sender, receiver, tag_, payload, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(Network, "send", swapping)
    params = {"key_source": "agreement"} if backend == "noise" else {
        "key_bits": 1024, "insecure_test_keys": True}
    with pytest.raises(CapabilityError, match="altered in transit"):
        run(RunConfig(protocol="secure-sum", backend=backend, backend_params=params,
                      reference=False))
