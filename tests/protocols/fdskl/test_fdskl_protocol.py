"""FDSKL against DSG: same seed, same alphas (single samples and mini-batches); the messages
Algorithm 3 sends; refusals."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from fedsec.errors import CapabilityError, ValidationError
from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.batches import owned
from fedsec.protocols.fdskl.protocol import FDSKL
from fedsec.runner import RunConfig, run
from fedsec.testing import check_protocol


def fdskl(partition: str = "vertical:parties=4", **params):
    params.setdefault("n_iterations", 300)
    return run(RunConfig(protocol="fdskl", dataset="breast_cancer", partition=partition,
                         secret_seed=0, params=params))


def gap(result) -> float:
    fed, cen = result.outcome.values["alpha"], result.reference.values["alpha"]
    return float(np.max(np.abs(fed - cen)) / np.max(np.abs(cen)))


@pytest.mark.parametrize("offsets", ["per-feature", "fresh", "none"])
def test_fdskl_reaches_the_dsg_alphas(offsets: str) -> None:
    result = fdskl(offsets=offsets)
    assert gap(result) < 1e-12
    assert result.record.comparison.agrees
    assert result.outcome.metrics["accuracy"] == result.reference.metrics["accuracy"]


@pytest.mark.parametrize(("partition", "params"), [
    ("vertical:parties=4,labels=party1+party3", {}),
    ("vertical:parties=5,labels=party1+party2+party4", {"structure": "cycle",
                                                       "offsets": "fresh"}),
    ("vertical:parties=3", {"kernel": "laplace", "loss": "smooth-hinge", "block": 7}),
])
def test_several_active_workers_structures_kernels_and_losses(partition: str, params) -> None:
    result = fdskl(partition, n_iterations=200, **params)
    assert gap(result) < 1e-9
    active = result.outcome.metrics["n_active"]
    if active > 1:  # f(x) is the tree-sum of the active workers' partial predictions
        assert Counter(m.tag for m in result.transcript.messages)[tags.PARTIAL_PREDICTION] == (
            200 * (active - 1))


def test_dsg_alone_matches_its_reference_and_learns_breast_cancer() -> None:
    result = run(RunConfig(protocol="dsg", dataset="breast_cancer", params={"n_iterations": 600}))
    assert result.record.comparison.agrees
    assert result.outcome.metrics["accuracy"] > 0.9


def test_alphas_stay_with_their_creators_and_messages_carry_pairs() -> None:
    result = fdskl("vertical:parties=4,labels=party1+party3")
    private = result.private
    assert "party/party2/value/alphas" not in private
    a1, a3 = private["party/party1/value/alphas"], private["party/party3/value/alphas"]
    assert a1.size + a3.size == 300
    for m in result.transcript.select(tag=tags.PARTIAL_DOT):
        residue, stride = m.meta["owner_stride"]
        n = sum(owned(start, stop, residue, stride).size for _, start, stop in m.meta["pairs"])
        assert m.payload.shape == (n,)
    assert not any(m.tag == tags.PARTIAL_DOT and m.receiver == m.sender
                   for m in result.transcript.messages)


def test_each_call_of_algorithm_3_costs_at_most_2_q_minus_1_messages() -> None:
    result = fdskl(offsets="fresh")
    blocks = Counter((m.meta["block"], m.meta["tree"], m.meta.get("excluded"))
                     for m in result.transcript.messages if m.tag in (tags.PARTIAL_DOT,
                                                                      tags.OFFSET_SUM))
    for (_, tree, _), count in blocks.items():
        # T1: q - 1 sums; T2: q - 2 sums, plus the delivery when its root is not the requester
        assert count == 3 if tree == "T1" else count in (2, 3)
    depth = max(m.meta["round"] for m in result.transcript.select(tag=tags.PARTIAL_DOT))
    assert depth == 2  # the requester on top of a balanced tree of three


def test_offsets_hide_partial_products_on_the_wire() -> None:
    raw = fdskl(offsets="none")
    masked = fdskl(offsets="per-feature")
    first = next(m for m in raw.transcript.select(tag=tags.PARTIAL_DOT)
                 if m.meta["covers"] == ["party4"])
    other = next(m for m in masked.transcript.select(tag=tags.PARTIAL_DOT)
                 if m.meta["covers"] == ["party4"])
    assert first.meta["pairs"] == other.meta["pairs"]
    assert np.all(other.payload - first.payload >= 0)
    assert np.all(other.payload - first.payload <= 2 * np.pi * len(first.meta["covers"]))


def test_bad_configurations_are_refused() -> None:
    with pytest.raises(ValidationError, match="'offsets' parameter of protocol 'fdskl'"):
        fdskl(offsets="sometimes")
    with pytest.raises(ValidationError, match="No star layout"):
        fdskl(structure="star")
    with pytest.raises(ValidationError, match="at least 3 workers"):
        fdskl("vertical:parties=2")
    with pytest.raises(ValidationError, match="binary classification or regression"):
        run(RunConfig(protocol="fdskl", dataset="iris", partition="vertical:parties=4"))
    with pytest.raises(CapabilityError, match="cannot drop senders"):
        run(RunConfig(protocol="fdskl", backend="noise", params={"n_iterations": 10},
                      backend_params={"threshold": 2, "dropout": 0.25}))
    with pytest.raises(ValidationError, match="DSG is centralized"):
        run(RunConfig(protocol="dsg", partition="horizontal:parties=2"))
    with pytest.raises(ValidationError, match="runs on vertical"):
        run(RunConfig(protocol="fdskl", partition="horizontal:parties=2"))


def test_star_runs_without_offsets() -> None:
    result = fdskl(structure="star", offsets="none", n_iterations=100)
    assert result.record.comparison.agrees
    assert {m.receiver for m in result.transcript.select(tag=tags.PARTIAL_DOT)} == {"party1"}


def test_agreement_allows_what_dsg_s_own_rounding_moves_and_not_a_changed_prediction() -> None:
    # A long smooth-hinge run: rounding alone moves the centralized DSG by about 3e-4, so a
    # federated alpha 1e-5 away agrees; the predicted classes must be the same exactly.
    result = run(RunConfig(protocol="fdskl", dataset="breast_cancer",
                           partition="vertical:parties=4", secret_seed=0,
                           params={"n_iterations": 20000, "loss": "smooth-hinge",
                                   "regularization": 1e-5, "step": 0.5}))
    comparison = result.record.comparison
    sensitivity = result.reference.metrics["rounding_sensitivity_alpha"]
    assert comparison.values["alpha"].max_rel_diff > 1e-8 < sensitivity  # 1e-8 alone: no
    assert comparison.values["alpha"].rtol == pytest.approx(10 * sensitivity)
    assert comparison.values["predictions"].rtol == 0.0
    assert comparison.agrees


# Mini-batches: federated equals centralized mini-batch DSG, and a batch costs one message per
# tree edge whatever its size.
@pytest.mark.parametrize(("partition", "params"), [
    ("vertical:parties=4", {"batch_size": 8}),
    ("vertical:parties=4", {"batch_size": 4, "features_per_iteration": 3, "block": 7}),
    ("vertical:parties=4,labels=party1+party3", {"batch_size": 5, "features_per_iteration": 2,
                                                 "offsets": "fresh"}),
    ("vertical:parties=5,labels=party1+party2+party4", {"batch_size": 3, "structure": "cycle",
                                                       "features_per_iteration": 4}),
    ("vertical:parties=3", {"batch_size": 6, "offsets": "none", "kernel": "laplace",
                            "loss": "smooth-hinge", "width_rule": "median"}),
])
def test_mini_batch_fdskl_reaches_the_mini_batch_dsg_alphas(partition: str, params) -> None:
    result = fdskl(partition, n_iterations=60, **params)
    r = params.get("features_per_iteration", 1)
    assert result.outcome.values["alpha"].shape == (60 * r,)
    assert gap(result) < 1e-9
    assert result.record.comparison.agrees
    one = fdskl(partition, **{**params, "n_iterations": 60, "batch_size": 1,
                               "features_per_iteration": 1})
    assert not np.allclose(one.outcome.values["alpha"][:60], result.outcome.values["alpha"][:60])


def test_a_batch_travels_as_one_message_per_link() -> None:
    B, r, n = 8, 2, 40
    batched = fdskl("vertical:parties=4,labels=party1+party3", n_iterations=n, batch_size=B,
                    features_per_iteration=r, block=10)
    counts = Counter((m.tag, m.meta.get("block"), m.meta.get("tree"))
                     for m in batched.transcript.messages)
    for block in range(4):  # per block and requester, T1 costs q - 1 messages whatever B is
        assert counts[(tags.PARTIAL_DOT, block, "T1")] == 2 * 3
    predictions = batched.transcript.select(tag=tags.PARTIAL_PREDICTION)
    assert len(predictions) == n  # two active workers: one edge per iteration
    assert all(m.payload.shape == (B,) and len(m.meta[tags.SAMPLES]) == B for m in predictions)
    announced = batched.transcript.select(tag=tags.SAMPLE_INDEX)[0].payload
    assert announced.shape == (1 + B + r, 5)  # iterations, their B samples, their r features' l'
    for m in batched.transcript.select(tag=tags.PARTIAL_DOT):
        residue, stride = m.meta[tags.OWNER_STRIDE]
        count = sum(owned(start, stop, residue, stride, r).size
                    for _, start, stop in m.meta[tags.PAIRS])
        assert m.payload.shape == (count,)


def test_mini_batch_runs_pass_the_conformance_checks() -> None:
    check_protocol(FDSKL, dataset="breast_cancer", partition="vertical:parties=4",
                   params={"n_iterations": 30, "batch_size": 4, "features_per_iteration": 2,
                           "width_rule": "median", "width_pairs": 50})
