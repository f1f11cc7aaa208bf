"""Model privacy of FDSKL: another active worker's share of f read from the partial predictions."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec import testing
from fedsec.attacks.fdskl.model_privacy import ModelReadout, final_estimate, read_out
from fedsec.errors import CapabilityError
from fedsec.runner import RunConfig, run
from fedsec.scoring.decision_function import DECISION_VALUES, DecisionFunction
from fedsec.views import build_view

TWO_ACTIVE = "vertical:parties=4,labels=party1+party3"


def fdskl(partition: str = TWO_ACTIVE, backend: str = "plain", **params):
    return run(RunConfig(protocol="fdskl", dataset="breast_cancer", partition=partition,
                         backend=backend, params={"n_iterations": 600, **params}))


@pytest.fixture(scope="module")
def two_active():
    return fdskl()


def attacked(result, threat: str):
    rec = ModelReadout().run(build_view(result.transcript, threat, result.private))
    return rec, DecisionFunction().score(rec, result.private)


def test_read_out_separates_what_the_sums_determine() -> None:
    forms = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    values = np.array([[3.0, 1.0], [2.0, 5.0], [7.0, 0.5]])
    known, x = read_out(forms, values)
    assert known.tolist() == [True, True, True]
    assert np.allclose(x, [[1.0, -4.0], [2.0, 5.0], [7.0, 0.5]])
    known, _ = read_out(forms[:1], values[:1])
    assert not known.any()  # a sum of two shares gives neither


def test_final_estimate_takes_the_last_reading_scaled_by_the_decay() -> None:
    rows, f = final_estimate(np.array([5, 2, 8]), np.array([1, 1, 3]),
                             np.array([4.0, 9.0, 2.0]), 10, 0.5, 4)
    assert rows.tolist() == [1, 3]
    assert np.allclose(f, [4.0 * 0.5**5, 2.0 * 0.5**2])


def test_the_picker_reads_the_other_share_exactly(two_active) -> None:
    rec, score = attacked(two_active, "party1")
    assert set(rec.info[DECISION_VALUES]) == {"party3"}
    assert score["readout_error"] < 1e-10
    # the final share, extrapolated from the last reading of each row (zero where none), is
    # closer than the zero baseline, and its sign right at almost every row read (chance: 1/2)
    assert score["baseline_relative_error"] == pytest.approx(1.0)
    assert score["relative_error"] < 0.9
    target = score["per_target"]["party/party3/value/alphas"]
    assert target["fraction_rows_read"] >= 0.4
    assert target["sign_agreement"] > 0.85


def test_a_broken_reading_scores_as_one(two_active) -> None:
    rec, _ = attacked(two_active, "party1")
    entry = rec.info[DECISION_VALUES]["party3"]
    shuffled = dict(entry, values=list(np.roll(entry["values"], 7)),
                    final=list(-np.asarray(entry["final"])))
    broken = type(rec)(attack=rec.attack, threat=rec.threat, estimates={}, baseline={},
                       info={**rec.info, DECISION_VALUES: {"party3": shuffled}})
    score = DecisionFunction().score(broken, two_active.private)
    assert score["readout_error"] > 0.5
    assert score["relative_error"] > 1.0


def test_not_applicable_without_partial_predictions(two_active) -> None:
    attack = ModelReadout()
    for threat in ("party2", "party2,party4"):
        reason = attack.not_applicable(build_view(two_active.transcript, threat,
                                                  two_active.private))
        assert reason is not None and "partial_prediction" in reason
    one_active = fdskl("vertical:parties=4", n_iterations=64)
    view = build_view(one_active.transcript, "party1", one_active.private)
    assert attack.not_applicable(view) is not None
    with pytest.raises(CapabilityError):
        attack.run(view)


def test_under_noise_the_picker_still_reads_and_the_link_reads_nothing() -> None:
    result = fdskl(backend="noise")
    _, score = attacked(result, "party1")
    assert score["readout_error"] < 1e-8
    assert score["relative_error"] < 0.9
    eavesdropper = build_view(result.transcript, "eavesdropper:party3->party1")
    reason = ModelReadout().not_applicable(eavesdropper)
    assert reason is not None and "can open none" in reason


def test_three_active_workers_a_single_worker_reads_only_leaves() -> None:
    result = fdskl("vertical:parties=5,labels=party1+party2+party4", backend="noise")
    rec = ModelReadout().run(build_view(result.transcript, "party1", result.private))
    assert rec.info[DECISION_VALUES] == {}  # a secure sum of two others: neither share alone
    assert rec.info["not_read"] == ["party2", "party4"]


def test_conformance_on_a_run_with_two_active_workers() -> None:
    testing.check_attack(ModelReadout, runs={"fdskl": {"partition": TWO_ACTIVE,
                                                       "params": {"n_iterations": 300}}})
    testing.check_scorer(DecisionFunction)


def test_rows_known_give_the_share_at_fresh_points() -> None:
    """Without offsets the active worker knows every row; the readings of a mini-batch run
    then determine the other share's coefficients, and the share at held-out rows."""
    result = fdskl(offsets="none", batch_size=4, n_iterations=1000)
    rec, score = attacked(result, "party1")
    assert rec.info["not_solved"] == {}
    assert score["fresh_error"] < 0.05
    assert score["relative_error"] < 0.05
    target = score["per_target"]["party/party3/value/alphas"]
    assert target["baseline_fresh_error"] == pytest.approx(1.0)
    assert target["fraction_rows_read"] == 1.0


def test_with_the_papers_offsets_a_worker_alone_cannot_solve(two_active) -> None:
    rec, score = attacked(two_active, "party1")
    assert "known exactly for no row" in rec.info["not_solved"]
    assert np.isnan(score["fresh_error"])
