"""FDSKL under masking backends: the same alphas as DSG, sums the workers on the way cannot open."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from fedsec.errors import CapabilityError
from fedsec.protocols.fdskl import tags
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.views import build_view

SMALL_KEYS = {"key_bits": 512, "insecure_test_keys": True}
BACKENDS = {"noise": {}, "ckks": {}, "paillier": SMALL_KEYS}


@functools.cache
def _run(backend: str, partition: str, params: tuple):
    return run(RunConfig(protocol="fdskl", dataset="breast_cancer", partition=partition,
                         secret_seed=0, backend=backend, backend_params=BACKENDS.get(backend, {}),
                         params=dict(params)))


def fdskl(backend: str, partition: str = "vertical:parties=4", **params):
    params.setdefault("n_iterations", 300)
    return _run(backend, partition, tuple(sorted(params.items())))


def gap(result) -> float:
    fed, cen = result.outcome.values["alpha"], result.reference.values["alpha"]
    return float(np.max(np.abs(fed - cen)) / np.max(np.abs(cen)))


CASES = [("vertical:parties=4", {}),
         ("vertical:parties=4,labels=party1+party3", {"offsets": "fresh"}),
         ("vertical:parties=3", {"offsets": "none", "block": 7})]


# Paillier (seconds per run, even with test-sized keys) on the first case only
@pytest.mark.parametrize(("backend", "partition", "params"),
                         [(b, *case) for b in ("noise", "ckks") for case in CASES]
                         + [("paillier", *CASES[0])])
def test_fdskl_under_each_backend_reaches_the_dsg_alphas(backend: str, partition: str,
                                                         params) -> None:
    result = fdskl(backend, partition, **params)
    assert gap(result) < (1e-9 if backend != "ckks" else 1e-6)
    assert result.record.comparison.agrees
    assert result.outcome.metrics["accuracy"] == result.reference.metrics["accuracy"]
    messages = result.transcript.messages
    shares = [m for m in messages if m.tag in (tags.PARTIAL_DOT, tags.PARTIAL_PREDICTION)]
    assert shares and all(m.protection == backend for m in shares)
    assert all(m.meta[tags.TREE] == tags.BACKEND_SUM for m in shares)
    assert not any(m.tag == tags.OFFSET_SUM for m in messages)  # no offsets, no T2
    # every worker but the requester sends one share per batch, to the requester
    assert all(m.receiver == m.meta[tags.REQUESTER] != m.sender
               for m in shares if m.tag == tags.PARTIAL_DOT)


def test_the_phase_holder_is_never_the_party_that_decrypts_the_sum() -> None:
    result = fdskl("paillier", offsets="fresh")
    # the requester never holds a phase when offsets are used
    assert np.asarray(result.private["party/party1/value/phase_features"]).size == 0
    # paillier: the lowest-named sender (party2) holds the key of party1's sums
    assert np.asarray(result.private["party/party2/value/phase_features"]).size == 0
    assert sum(np.asarray(result.private[f"party/party{i}/value/phase_features"]).size
               for i in (3, 4)) == 300


@pytest.mark.parametrize("threat", ["party2", "party1,party2"])
def test_what_a_worker_on_the_tree_recovers_falls_to_nothing_under_a_backend(threat) -> None:
    def recovered(result) -> dict[str, float]:
        view = build_view(result.transcript, threat, result.private)
        rec = create("attack", "linear-inference", {"curve_points": 0}).run(view)
        return {key.split("/")[1]: float(np.linalg.norm(est - result.private[key])
                                         / np.linalg.norm(result.private[key]))
                for key, est in rec.estimates.items()}

    plain = recovered(fdskl("plain", offsets="fresh"))
    assert set(plain) == {"party3", "party4"} and max(plain.values()) < 0.7
    for backend in ("noise", "paillier"):
        assert recovered(fdskl(backend, offsets="fresh")) == {}


def test_an_eavesdropper_cannot_open_a_single_share() -> None:
    result = fdskl("paillier", offsets="fresh")
    view = build_view(result.transcript, "eavesdropper:*", result.private)
    shares = view.select(tag=tags.PARTIAL_DOT)
    assert shares and not any(view.can_open(m) for m in shares)


def test_a_backend_that_drops_senders_is_refused() -> None:
    with pytest.raises(CapabilityError, match="cannot drop senders"):
        run(RunConfig(protocol="fdskl", dataset="breast_cancer",
                      partition="vertical:parties=4", secret_seed=0, backend="noise",
                      backend_params={"threshold": 2, "dropped": "party3"},
                      params={"n_iterations": 20}))
