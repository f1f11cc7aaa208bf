"""Every registered component passes the public conformance checks."""

from __future__ import annotations

import pytest

from fedsec import registry, testing


@pytest.mark.parametrize("name", registry.names("protocol"))
def test_protocol_conformance(name: str) -> None:
    testing.check_protocol(registry.get("protocol", name))


@pytest.mark.parametrize("name", registry.names("backend"))
def test_backend_conformance(name: str) -> None:
    testing.check_backend(registry.get("backend", name))


@pytest.mark.parametrize("name", registry.names("attack"))
def test_attack_conformance(name: str) -> None:
    testing.check_attack(registry.get("attack", name))


@pytest.mark.parametrize("name", registry.names("defense"))
def test_defense_conformance(name: str) -> None:
    testing.check_defense(registry.get("defense", name))


@pytest.mark.parametrize("name", registry.names("scorer"))
def test_scorer_conformance(name: str) -> None:
    testing.check_scorer(registry.get("scorer", name))


def test_same_seed_same_transcript_different_seed_differs() -> None:
    from fedsec.runner import RunConfig, run

    a = run(RunConfig(protocol="secure-sum", seed=5))
    b = run(RunConfig(protocol="secure-sum", seed=5))
    c = run(RunConfig(protocol="secure-sum", seed=6))
    testing.assert_same_transcript(a.transcript, b.transcript)
    assert a.transcript.footer["head"] != c.transcript.footer["head"]


@pytest.mark.parametrize("backend", ["noise", "paillier"])
def test_secure_sum_conforms_under_deterministic_backends(backend: str) -> None:
    testing.check_protocol(registry.get("protocol", "secure-sum"), backend=backend,
                           dataset="iris")
