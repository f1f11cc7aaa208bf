"""Conformance of protocols and backends, and the helpers every check shares.

Part of :mod:`fedsec.testing` (import the checks from there).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from fedsec import registry
from fedsec.errors import ValidationError
from fedsec.federation import Federation, Party
from fedsec.interfaces import MaskingBackend, Protocol
from fedsec.keys import KeyStore
from fedsec.network import Network
from fedsec.runner import RunConfig, RunResult, run
from fedsec.seeding import generator, new_secret_seed
from fedsec.transcript import Message, Transcript, TranscriptWriter, read_transcript
from fedsec.transcript.payload import encode

_UNKNOWN_PARAM = "no_such_parameter_xyz"


def small_federation(n_senders: int, seed: int = 0, extra: tuple[str, ...] = ()) -> Federation:
    """Parties ``p00``.. (clients) and ``agg`` (aggregator), plus ``extra`` observers, no data.

    For testing a backend or a building block on its own: every party has its
    own stream from ``seed`` (which is also the federation's secret seed: nothing here is
    secret) and an empty key store; messages are recorded in memory.
    """
    names = [f"p{i:02d}" for i in range(n_senders)]
    roles = {**{n: "client" for n in names}, "agg": "aggregator", **{e: "observer" for e in extra}}
    network = Network(TranscriptWriter({"parties": roles}), roles)
    parties = {n: Party(name=n, role=r, shard=None, rng=generator(seed, n), keys=KeyStore(n))
               for n, r in roles.items()}
    return Federation(parties=parties, network=network, seed=seed, secret_seed=seed)


def check_rejects_unknown_parameter(cls: type) -> None:
    """Constructing with an unknown parameter raises a ValidationError naming it."""
    try:
        cls(**{_UNKNOWN_PARAM: 1})
    except ValidationError as error:
        assert _UNKNOWN_PARAM in str(error), f"{cls.__name__}: error does not name the parameter"
        return
    raise AssertionError(f"{cls.__name__} accepted an unknown parameter {_UNKNOWN_PARAM!r}")


def assert_same_transcript(a: Transcript, b: Transcript) -> None:
    """Two transcripts are identical except for timing."""
    assert dict(a.header) == dict(b.header), "headers differ"
    assert len(a) == len(b), f"{len(a)} messages versus {len(b)}"
    for x, y in zip(a.messages, b.messages, strict=True):
        assert _chained(x) == _chained(y), f"message {x.seq} ({x.tag}) differs between the runs"
    assert a.footer == b.footer, "end records differ"  # the chain values among them


def assert_secret_unseen(transcript: Transcript, secret_seed: int) -> None:
    """No message and no header field carries the run's secret seed in any plain encoding
    (decimal, hexadecimal, 16 bytes either way round): what every View is made of holds
    nothing to regenerate the parties' secrets from."""
    forms = [str(secret_seed).encode(), f"{secret_seed:x}".encode(),
             secret_seed.to_bytes(16, "little"), secret_seed.to_bytes(16, "big")]
    header = json.dumps(dict(transcript.header), sort_keys=True, default=str).encode()
    for form in forms:
        assert form not in header, "the header holds the secret seed"
    for m in transcript.messages:
        carried = b"%b\x00%b" % (encode(m.payload)[3], m.meta_json.encode())
        for form in forms:
            assert form not in carried, f"message {m.seq} ({m.tag}) carries the secret seed"


def _chained(m: Message) -> tuple[Any, ...]:
    """What the chain covers of a message: every field but the timings, the payload's bytes."""
    return (m.seq, m.round, m.phase, m.sender, m.receiver, m.tag, m.kind, m.protection,
            m.key_id, m.dtype, m.shape, m.size, m.meta_json, encode(m.payload)[3], m.digest)


def check_protocol(cls: type[Protocol], *, dataset: str | None = None,
                   partition: str | None = None, backend: str = "plain",
                   seed: int = 0, params: Mapping[str, Any] | None = None) -> RunResult:
    """Same seeds → same transcript (the secret seed a fresh random one, given to both runs);
    transcript round-trips; federated = centralized.

    Returns the first run's result for further checks.
    """
    check_rejects_unknown_parameter(cls)
    name = registered_name("protocol", cls)
    secret = new_secret_seed()
    config = RunConfig(protocol=name, dataset=dataset, partition=partition, backend=backend,
                       seed=seed, secret_seed=secret, params=dict(params or {}))
    with tempfile.TemporaryDirectory() as tmp:
        first = run(config, Path(tmp) / "a")
        second = run(config)
        assert_same_transcript(first.transcript, second.transcript)
        assert_secret_unseen(first.transcript, secret)
        loaded = read_transcript(Path(tmp) / "a" / "transcript.arrow")
        assert_same_transcript(first.transcript, loaded)
        report = loaded.verify()
        assert report.ok, f"{name}: saved transcript fails verification: {report.summary()}"
        for x, y in zip(first.transcript.messages, loaded.messages, strict=True):
            _assert_same_payload(x.payload, y.payload, x.seq)
    comparison = first.record.comparison
    assert comparison.agrees, f"{name}: federated result differs from centralized: {comparison}"
    return first


def check_backend(cls: type[MaskingBackend], *, n_parties: int = 4, length: int = 16,
                  seed: int = 0) -> None:
    """A secure sum through the backend equals the plaintext sum within its precision."""
    from fedsec.backends.primitives import secure_sum

    check_rejects_unknown_parameter(cls)
    backend = cls()
    federation = small_federation(n_parties, seed)
    network = federation.network
    rng = generator(seed, "check_backend")
    vectors = {p.name: rng.normal(size=length) for p in federation.by_role("client")}
    total = secure_sum(federation, backend, vectors, "agg")
    expected = np.sum(list(vectors.values()), axis=0)
    tol = 1e-9 if backend.exact else 1e-6
    assert np.allclose(total, expected, rtol=tol, atol=tol * np.abs(expected).max()), (
        f"{cls.__name__}: secure sum differs from the plaintext sum"
    )
    assert network.close().verify().ok


def registered_name(kind: str, cls: type) -> str:
    for name, registered in registry.classes(kind).items():
        if registered is cls:
            return name
    return f"{cls.__module__}:{cls.__qualname__}"


def _assert_same_payload(a: Any, b: Any, seq: int) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, (
            f"message {seq}: array layout differs after a round trip"
        )
        assert a.tobytes() == b.tobytes(), f"message {seq}: array bytes differ after a round trip"
    else:
        assert a == b, f"message {seq}: bytes differ after a round trip"
