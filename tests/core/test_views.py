"""Threat models and the views they induce."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import CapabilityError, UnknownNameError, ValidationError
from fedsec.threat import ThreatModel
from fedsec.transcript import TranscriptWriter
from fedsec.views import build_view

PARTIES = {"a": "client", "b": "client", "s": "server"}


@pytest.fixture
def transcript():
    w = TranscriptWriter({"parties": PARTIES})
    w.record(round=0, phase="p", sender="a", receiver="s", tag="vec", payload=np.ones(2))
    w.record(round=0, phase="p", sender="b", receiver="s", tag="vec", payload=b"ct",
             protection="paillier", key_id="pk")
    w.record(round=0, phase="p", sender="s", receiver="a", tag="sum", payload=np.ones(2))
    w.record(round=0, phase="p", sender="a", receiver="b", tag="peer", payload=np.zeros(1))
    return w.close()


PRIVATE = {"party/s/key/pk": b"secret", "party/a/shard/cell0/X": np.ones((2, 2)),
           "party/b/shard/cell0/X": np.zeros((2, 2))}


def test_party_sees_its_own_links(transcript) -> None:
    view = build_view(transcript, "s", PRIVATE)
    assert [m.seq for m in view.messages] == [0, 1, 2]
    assert set(view.keys) == {"pk"}
    assert view.can_open(view.messages[1])
    assert set(view.knowledge) == {"s"}


def test_coalition_pools_messages_and_knowledge(transcript) -> None:
    view = build_view(transcript, "a,b", PRIVATE)
    assert [m.seq for m in view.messages] == [0, 1, 2, 3]
    assert set(view.knowledge) == {"a", "b"}
    assert not view.can_open(view.messages[1])  # nobody in the coalition holds pk
    with pytest.raises(CapabilityError, match="does not hold"):
        view.open(view.messages[1])
    assert "shard/cell0/X" in view.own("a")


def test_eavesdropper_sees_tapped_links_and_no_keys(transcript) -> None:
    view = build_view(transcript, "eavesdropper:a->s,b<->s", PRIVATE)
    assert [m.seq for m in view.messages] == [0, 1]
    assert view.knowledge == {}
    assert not view.can_open(view.messages[1])
    everything = build_view(transcript, "eavesdropper:*")
    assert len(everything.messages) == 4


def test_threat_model_errors(transcript) -> None:
    with pytest.raises(UnknownNameError, match="Valid party names: a, b, s"):
        build_view(transcript, "mallory")
    for bad in ("", "a,,b", "a,a", "eavesdropper:", "eavesdropper:a-b"):
        with pytest.raises(ValidationError):
            ThreatModel.parse(bad)
    assert str(ThreatModel.parse("eavesdropper:a<->b")) == "eavesdropper:a->b,b->a"


def test_no_view_holds_the_runs_secret_seed_only_a_commitment_to_it() -> None:
    """The secret seed every party's secret derives from (the gaussian-noise defence's noise,
    the clients' shared seed, simulation keys) is the auditor's: an attack reading the header
    finds a keyed commitment, not the seed; the same seeds still give one transcript."""
    import json as _json
    import secrets

    from fedsec.runner import RunConfig, run
    from fedsec.seeding import seed_commitment
    from fedsec.views import build_view

    secret = secrets.randbits(128)
    config = RunConfig(protocol="secure-sum", backend="noise", seed=3, secret_seed=secret,
                       reference=False, defenses=[("gaussian-noise", {"sigma": 1.0})])
    result = run(config)
    for threat in ("aggregator", "party1", "eavesdropper:party1->aggregator"):
        view = build_view(result.transcript, threat, result.private)
        text = _json.dumps(dict(view.header)) + " ".join(m.meta_json for m in view.messages)
        assert str(secret) not in text and hex(secret)[2:] not in text
        assert view.header["seed_commitment"] == seed_commitment(3, secret)
    again = run(config)
    assert again.transcript.footer == result.transcript.footer
