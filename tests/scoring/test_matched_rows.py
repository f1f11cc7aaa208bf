"""``matched-rows`` cannot certify a leak a random guess would show: uninformed estimates of
the right shape score at their baselines, whatever the pool and the rule."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.outcomes import Reconstruction
from fedsec.scoring.rows import MatchedRows

VICTIM = "party/a/shard/cell0/X"


def federation(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {VICTIM: rng.normal(size=(60, 8)), "party/a/value/shared_rows": rng.permutation(60),
            "party/b/shard/cell0/X": rng.normal(size=(60, 8)),
            "party/c/shard/cell0/X": rng.normal(size=(40, 8)),
            "outcome/auxiliary/X": rng.normal(size=(90, 8))}


def score(estimate: np.ndarray, truth: dict[str, np.ndarray], **params: object) -> dict:
    mean = np.repeat(truth[VICTIM].mean(axis=0, keepdims=True), len(estimate), axis=0)
    rec = Reconstruction(attack="demo", threat="x", estimates={VICTIM: estimate},
                         baseline={VICTIM: mean})
    return MatchedRows(**params).score(rec, truth)


def projected(truth: dict[str, np.ndarray], rank: int, seed: int) -> np.ndarray:
    basis, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(8, rank)))
    return truth[VICTIM][truth["party/a/value/shared_rows"]] @ basis @ basis.T


@pytest.mark.parametrize("pool", ["victim", "auxiliary"])
@pytest.mark.parametrize("rank", [1, 2, 4])
def test_a_random_projection_scores_at_the_projection_baseline(rank: int, pool: str) -> None:
    truth = federation()
    rates = [score(projected(truth, rank, seed), truth, pool=pool) for seed in range(1, 21)]
    measured = np.mean([r["reidentified"] for r in rates])
    baseline = np.mean([r["projection_reidentified"] for r in rates])
    assert abs(measured - baseline) < 0.06  # the same distribution, other draws


def test_optimal_assignment_gives_any_exact_projection_back_and_says_so() -> None:
    truth = federation()
    r = score(projected(truth, 2, seed=3), truth, rule="assignment")
    assert r["reidentified"] == r["projection_reidentified"] == 1.0  # the metric, not a leak
    assert score(projected(truth, 2, seed=3), truth)["reidentified"] < 0.5  # nearest: not


def test_a_random_guess_and_the_mean_score_at_chance() -> None:
    truth = federation()
    guess = np.random.default_rng(9).normal(size=(60, 8))
    for pool, chance in (("victim", 1 / 60), ("federation", 1 / 160), ("auxiliary", 1 / 150)):
        r = score(guess, truth, pool=pool)
        assert r["chance_reidentified"] == pytest.approx(chance)
        assert r["reidentified"] <= 4 * chance
        assert r["baseline_reidentified"] <= 1 / 60  # one record for every row: one hit
        assert r["advantage"] < 0.05


def test_exact_rows_are_found_in_any_pool() -> None:
    truth = federation()
    exact = truth[VICTIM][truth["party/a/value/shared_rows"]]
    for pool in ("victim", "federation", "auxiliary"):
        r = score(exact, truth, pool=pool)
        assert r["reidentified"] == 1.0 and r["set_error"] == pytest.approx(0.0)


def test_assignment_in_the_federation_pool_is_refused_with_the_fix() -> None:
    with pytest.raises(ValidationError, match="rule=nearest with pool=federation"):
        MatchedRows(pool="federation", rule="assignment")


def test_the_auxiliary_pool_adds_held_out_records_in_the_victims_columns() -> None:
    truth = federation()
    truth["outcome/auxiliary/X"] = np.random.default_rng(5).normal(size=(90, 12))
    truth["party/a/shard/cell0/columns"] = np.arange(2, 10)
    exact = truth[VICTIM][truth["party/a/value/shared_rows"]]
    r = score(exact, truth, pool="auxiliary")
    assert r["pool_size"] == 150 and r["reidentified"] == 1.0
    # a held-out record that, in the victim's columns, lies on a noisy estimate takes its link
    noisy = exact + np.random.default_rng(6).normal(scale=0.01, size=exact.shape)
    assert score(noisy, truth, pool="auxiliary")["reidentified"] == 1.0
    truth["outcome/auxiliary/X"][0, 2:10] = noisy[0]
    assert score(noisy, truth, pool="auxiliary")["reidentified"] == pytest.approx(59 / 60)


def test_the_auxiliary_pool_without_held_out_records_is_refused_with_the_fix() -> None:
    truth = federation()
    del truth["outcome/auxiliary/X"]
    with pytest.raises(ValidationError, match="run the protocol again, or use pool=victim"):
        score(truth[VICTIM], truth, pool="auxiliary")
