"""FDSKL with mini-batches: federated equals centralized DSG, and a batch costs one message per
tree edge whatever its size."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.batches import owned
from fedsec.protocols.fdskl.protocol import FDSKL
from fedsec.runner import RunConfig, run
from fedsec.testing import check_protocol


def fdskl(partition: str = "vertical:parties=4", **params):
    params.setdefault("n_iterations", 60)
    return run(RunConfig(protocol="fdskl", dataset="breast_cancer", partition=partition,
                         params=params))


def gap(result) -> float:
    fed, cen = result.outcome.values["alpha"], result.reference.values["alpha"]
    return float(np.max(np.abs(fed - cen)) / np.max(np.abs(cen)))


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
    result = fdskl(partition, **params)
    r = params.get("features_per_iteration", 1)
    assert result.outcome.values["alpha"].shape == (60 * r,)
    assert gap(result) < 1e-9
    assert result.record.comparison.agrees
    one = fdskl(partition, **{**params, "batch_size": 1, "features_per_iteration": 1})
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
