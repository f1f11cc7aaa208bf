"""NRI-DC Theorem 2.4: a worker alone, from the anchor and the master's reply, stays at baseline."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec import testing
from fedsec.attacks.nri_dc.worker_view import WorkerView, class_balance, mixture_estimate
from fedsec.private_store import shard_key
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.views import build_view


def nri_dc(backend: str = "plain"):
    return run(RunConfig(protocol="nri-dc", backend=backend, seed=0))


@pytest.fixture(scope="module")
def plain():
    return nri_dc()


def scored(result, threat: str):
    rec = WorkerView().run(build_view(result.transcript, threat, result.private))
    return rec, create("scorer", "reconstruction-error").score(rec, result.private)


def test_mixture_follows_the_balance() -> None:
    records = np.array([[0.0, 1.0], [2.0, 1.0], [10.0, 5.0]])
    labels = np.array([0, 0, 1])
    assert mixture_estimate(records, labels, np.array([0, 1]),
                            np.array([1.0, 0.0])).tolist() == [1.0, 1.0]
    anchor = np.array([[-1.0, 0.0], [1.0, 0.0]] * 5)
    balance = class_balance(anchor, np.array([0, 1] * 5), records, np.array([0, 1]))
    assert balance.sum() == pytest.approx(1.0)


def test_a_worker_alone_stays_at_its_baseline(plain) -> None:
    for threat in ("party2", "party1", "party2,party5"):
        rec, score = scored(plain, threat)
        assert score["n_targets"] == 14 - 1 - len(threat.split(","))
        # the reply moved the estimate, yet not closer than the worker's own mean
        key = shard_key("party3", 0, "X")
        assert not np.allclose(rec.estimates[key], rec.baseline[key])
        assert abs(score["advantage"]) < 0.05
        assert score["relative_error"] > 0.3
        # its one iterative step, the labelling rule's fit, ran to convergence
        fit = rec.info["convergence"]
        assert fit["stopped"] == "converged" and 0 < fit["steps"] < fit["budget"]


def test_what_the_estimate_could_reach_at_best(plain) -> None:
    """No estimate that is one vector for every record beats the victim's own mean; the
    baseline is within a few hundredths of it, so staying at baseline is no artefact of a
    far-off baseline."""
    _, score = scored(plain, "party2")
    floor = []
    for j in range(1, 14):
        if j == 2:
            continue
        X = np.asarray(plain.private[shard_key(f"party{j}", 0, "X")])
        floor.append(np.linalg.norm(X - X.mean(axis=0)) / np.linalg.norm(X))
    assert score["baseline_relative_error"] - np.mean(floor) < 0.03


def test_a_wrong_guess_scores_below_the_baseline(plain) -> None:
    rec, _ = scored(plain, "party2")
    wrong = {k: v + 0.5 for k, v in rec.estimates.items()}
    broken = type(rec)(attack=rec.attack, threat=rec.threat, estimates=wrong,
                       baseline=rec.baseline, info=rec.info)
    assert create("scorer", "reconstruction-error").score(broken, plain.private)[
        "advantage"] < -0.5


def test_not_applicable_to_the_master_or_without_a_reply(plain) -> None:
    attack = WorkerView()
    for threat in ("master", "master,party1"):
        reason = attack.not_applicable(build_view(plain.transcript, threat, plain.private))
        assert reason is not None and "pinv-reconstruction" in reason
    reason = attack.not_applicable(build_view(plain.transcript, "eavesdropper:party2->master"))
    assert reason is not None and "anchor_predictions" in reason


def test_under_noise_the_worker_reads_its_reply_and_the_link_nothing() -> None:
    result = nri_dc("noise")
    _, score = scored(result, "party2")
    assert abs(score["advantage"]) < 0.05
    reason = WorkerView().not_applicable(
        build_view(result.transcript, "eavesdropper:master->party2"))
    assert reason is not None and "can read no reply" in reason


def test_conformance() -> None:
    testing.check_attack(WorkerView)
