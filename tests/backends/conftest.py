"""Helpers to build a small federation for backend tests."""

from __future__ import annotations

import pytest

from fedsec.federation import Federation, Party
from fedsec.keys import KeyStore
from fedsec.network import Network
from fedsec.seeding import generator
from fedsec.transcript import TranscriptWriter


def make_federation(n_senders: int, seed: int = 0, extra: tuple[str, ...] = ()) -> Federation:
    names = [f"p{i:02d}" for i in range(n_senders)]
    roles = {**{n: "client" for n in names}, "agg": "aggregator", **{e: "observer" for e in extra}}
    network = Network(TranscriptWriter({"parties": roles}), roles)
    parties = {n: Party(name=n, role=r, shard=None, rng=generator(seed, n), keys=KeyStore(n))
               for n, r in roles.items()}
    return Federation(parties=parties, network=network, seed=seed)


@pytest.fixture
def federation_factory():
    return make_federation
