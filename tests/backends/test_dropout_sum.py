"""The noise backend's dropout-tolerant sums: the survivors' sum with any dropouts the threshold
allows, a clear refusal beyond it, and what each party ends up holding."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.backends import sealing, tags
from fedsec.backends.dropouts import threshold_range
from fedsec.backends.primitives import CONTRIBUTION_TAG, secure_sum
from fedsec.errors import CapabilityError, ValidationError
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.testing import assert_same_transcript, small_federation
from fedsec.transcript import Transcript
from fedsec.views import build_view

NAMES = [f"p{i:02d}" for i in range(10)]


def _vectors(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(scale=5.0, size=6) for name in NAMES[:n]}


def _survivors_sum(vectors: dict[str, np.ndarray], dropped: set[str]) -> np.ndarray:
    return np.sum([v for name, v in vectors.items() if name not in dropped], axis=0)


@settings(max_examples=25, deadline=None)
@given(dropped=st.sets(st.sampled_from(NAMES[:6]), max_size=6))
def test_complete_graph_sums_the_survivors_below_the_threshold_and_refuses_above(
        dropped) -> None:
    """6 senders, threshold 4: each sender's shares have 6 holders, so up to 2 may drop."""
    vectors = _vectors(6)
    backend = create("backend", "noise", {"threshold": 4, "dropped": ",".join(sorted(dropped))}
                     if dropped else {"threshold": 4})
    federation = small_federation(6)
    if len(dropped) > 2:
        with pytest.raises(ValidationError, match=r"cannot be unmasked.*threshold=4"):
            secure_sum(federation, backend, vectors, "agg")
        return
    total = secure_sum(federation, backend, vectors, "agg")
    np.testing.assert_allclose(total, _survivors_sum(vectors, dropped), atol=1e-9)
    transcript = federation.network.close()
    senders = {m.sender for m in transcript.select(tag=CONTRIBUTION_TAG)}
    assert senders == set(vectors) - dropped


@settings(max_examples=25, deadline=None)
@given(dropped=st.sets(st.sampled_from(NAMES), max_size=5))
def test_sparse_graph_opens_exactly_when_every_sender_keeps_threshold_holders(dropped) -> None:
    """10 senders on a Harary graph of degree 4: 5 holders per sender, threshold 3."""
    vectors = _vectors(10, seed=1)
    params = {"threshold": 3, "n_neighbours": 4}
    if dropped:
        params["dropped"] = ",".join(sorted(dropped))
    federation = small_federation(10)
    backend = create("backend", "noise", params)
    context = backend.setup(federation, senders=list(vectors), receiver="agg")
    holders = {u: {u, *near} for u, near in context.state["neighbours"].items()}
    opens = all(len(h - dropped) >= 3 for h in holders.values())
    if not opens:
        with pytest.raises(ValidationError, match="cannot be unmasked"):
            secure_sum(federation, backend, vectors, "agg")
        return
    total = secure_sum(federation, backend, vectors, "agg")
    np.testing.assert_allclose(total, _survivors_sum(vectors, dropped), atol=1e-9)


def test_a_drawn_fraction_drops_and_the_aggregator_holds_only_what_unmasking_needs() -> None:
    vectors = _vectors(8, seed=2)
    federation = small_federation(8)
    backend = create("backend", "noise", {"threshold": 5, "dropout": 0.25})
    total = secure_sum(federation, backend, vectors, "agg")
    private = federation.knowledge()
    transcript = federation.network.close()
    contributions = transcript.select(tag=CONTRIBUTION_TAG)
    survivors = {m.sender for m in contributions}
    assert len(survivors) == 6
    np.testing.assert_allclose(total, _survivors_sum(vectors, set(vectors) - survivors),
                               atol=1e-9)
    label = contributions[0].meta[tags.ROUND]
    held = federation.party("agg").keys
    assert all(tags.self_key_id(u, label) in held for u in survivors)
    assert not any(tags.mask_key_id(u, label) in held for u in survivors)
    assert all(tags.mask_key_id(u, label) in held for u in set(vectors) - survivors)
    view = build_view(transcript, "agg", private)
    assert not any(view.can_open(m) for m in contributions)
    shares = transcript.select(tag=tags.SHARES_FORWARD)
    assert not any(view.can_open(m) for m in shares)  # sealed to their holders
    holder = build_view(transcript, shares[0].receiver, private)
    assert holder.can_open(shares[0])
    assert len(holder.open(shares[0])) == len(shares[0].meta[tags.FROM]) * sealing.RECORD_BYTES


def test_same_secret_seed_same_transcript_and_agreement_keys_work() -> None:
    vectors = _vectors(5)

    def once(params: dict) -> Transcript:
        federation = small_federation(5, seed=4)
        total = secure_sum(federation, create("backend", "noise", params), vectors, "agg")
        transcript = federation.network.close()
        survivors = {m.sender for m in transcript.select(tag=CONTRIBUTION_TAG)}
        np.testing.assert_allclose(total, _survivors_sum(vectors, set(vectors) - survivors),
                                   atol=1e-9)
        return transcript

    simulation = {"threshold": 3, "dropout": 0.2}
    assert_same_transcript(once(simulation), once(simulation))
    agreed = once({"threshold": 4, "key_source": "agreement", "dropped": "p03"})
    assert {m.meta["key_source"] for m in agreed.select(tag=tags.KEYS)} == {"agreement"}


@pytest.mark.parametrize(("params", "match"), [
    ({"threshold": 1}, "0 .no dropout tolerance. or an int >= 2"),
    ({"dropout": 0.1}, ">= 2 when senders drop"),
    ({"dropped": "p01"}, ">= 2 when senders drop"),
    ({"threshold": 3, "dropout": 0.1, "dropped": "p01"}, "empty when 'dropout'"),
    ({"threshold": 3, "dropout": 1.0}, "dropout"),
])
def test_inconsistent_parameters_are_refused_at_construction(params, match) -> None:
    with pytest.raises(ValidationError, match=match):
        create("backend", "noise", params)


def test_a_threshold_outside_the_sums_range_is_refused_naming_it() -> None:
    assert threshold_range(6) == (4, 6)
    for threshold in (3, 7):
        backend = create("backend", "noise", {"threshold": threshold})
        with pytest.raises(ValidationError, match=r"'threshold'.*from 4 to 6"):
            secure_sum(small_federation(6), backend, _vectors(6), "agg")
    sparse = create("backend", "noise", {"threshold": 2, "n_neighbours": 4})
    with pytest.raises(ValidationError, match="from 3 to 5"):
        secure_sum(small_federation(10), sparse, _vectors(10), "agg")
    unknown = create("backend", "noise", {"threshold": 3, "dropped": "p09"})
    with pytest.raises(ValidationError, match=r"'dropped'.*p09"):
        secure_sum(small_federation(4), unknown, _vectors(4), "agg")


def test_only_the_complete_survivors_sum_opens() -> None:
    federation = small_federation(5)
    backend = create("backend", "noise", {"threshold": 3, "dropped": "p02"})
    vectors = _vectors(5)
    secure_sum(federation, backend, vectors, "agg")
    context = next(iter(backend.__dict__["_contexts"].values()))
    transcript = federation.network.close()
    first = transcript.select(tag=CONTRIBUTION_TAG)[0]
    one = backend.from_wire(context, "agg", backend.to_wire(
        backend.protect(context, first.sender, vectors[first.sender], nonce=next(
            iter(context.state["rounds"])))))
    with pytest.raises(CapabilityError, match="still masked"):
        backend.reveal(federation, context, one)


@pytest.mark.parametrize("secret_seed", [1, 2, 3])
def test_secure_sum_runs_open_the_survivors_sum(secret_seed) -> None:
    result = run(RunConfig(protocol="secure-sum", partition="horizontal:parties=8",
                           backend="noise", backend_params={"threshold": 5, "dropout": 0.25},
                           secret_seed=secret_seed))
    survivors = sorted({m.sender for m in result.transcript.select(tag=CONTRIBUTION_TAG)})
    assert len(survivors) == 6
    expected = np.sum([result.private[f"party/{p}/value/vector"] for p in survivors], axis=0)
    total = result.outcome.values["sum"]
    np.testing.assert_allclose(total, expected[:total.size], rtol=1e-12, atol=1e-9)
    assert result.record.backend["params"]["threshold"] == 5


def test_secure_sum_run_refuses_dropouts_beyond_the_threshold() -> None:
    config = RunConfig(protocol="secure-sum", partition="horizontal:parties=8", backend="noise",
                       backend_params={"threshold": 5, "dropout": 0.5}, secret_seed=1)
    with pytest.raises(ValidationError, match=r"4 of the 8 holders.*threshold=5"):
        run(config)
