"""The empirical lower bounds: the one-run estimator against its binomial tail and closed
form, its validity on a mechanism of known epsilon, and the multi-run hypothesis test
against exact Clopper-Pearson intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from fedsec.errors import ValidationError
from fedsec.privacy.empirical import (
    clopper_pearson_upper,
    guesses_from_scores,
    hypothesis_test_epsilon,
    one_run_audit,
    one_run_ceiling,
    one_run_epsilon,
    one_run_p_value,
)


def _tail(r: int, v: int, epsilon: float) -> float:
    """P[Binomial(r, q) >= v] summed term by term in exact integers and floats (the oracle)."""
    q = math.exp(epsilon) / (1 + math.exp(epsilon))
    return sum(math.comb(r, k) * q**k * (1 - q) ** (r - k) for k in range(v, r + 1))


@pytest.mark.parametrize(("r", "v", "epsilon"), [(50, 40, 1.0), (200, 150, 0.5), (30, 30, 3.0)])
def test_the_p_value_without_delta_is_the_binomial_tail(r: int, v: int, epsilon: float) -> None:
    assert one_run_p_value(1000, r, v, epsilon) == pytest.approx(_tail(r, v, epsilon), rel=1e-9)


def test_the_ceiling_has_its_closed_form_and_is_printed() -> None:
    # all r guesses right: q^r = beta at the bound, so epsilon = log(q / (1 - q)), q = beta^(1/r)
    for m in (10, 100, 1000, 10_000):
        q = 0.05 ** (1 / m)
        assert one_run_ceiling(m) == pytest.approx(math.log(q / (1 - q)), abs=1e-8)
    ceiling = one_run_ceiling(1000, delta=1e-5)
    print(f"one-run ceiling, 1,000 canaries, 95%: {one_run_ceiling(1000):.3f} (delta 0), "
          f"{ceiling:.3f} (delta 1e-5)")
    assert 3.0 < ceiling <= one_run_ceiling(1000)


def test_the_bound_sits_where_the_p_value_crosses_beta() -> None:
    for (r, v), delta in zip([(1000, 900), (400, 380), (60, 55)], [0.0, 1e-5, 1e-4],
                             strict=True):
        epsilon = one_run_epsilon(1000, r, v, beta=0.05, delta=delta)
        assert epsilon > 0
        assert one_run_p_value(1000, r, v, epsilon, delta) < 0.05
        assert one_run_p_value(1000, r, v, epsilon + 1e-6, delta) >= 0.05


def test_delta_only_weakens_the_bound() -> None:
    for delta in (1e-6, 1e-4, 1e-2):
        assert one_run_p_value(1000, 500, 450, 2.0, delta) >= one_run_p_value(1000, 500, 450,
                                                                              2.0)
        assert one_run_epsilon(1000, 500, 450, delta=delta) <= one_run_epsilon(1000, 500, 450)
    # delta large enough that 2 m delta alone passes beta: nothing can be concluded
    assert one_run_epsilon(1000, 1000, 1000, delta=1e-3) < one_run_ceiling(1000)


def test_the_bound_holds_on_randomized_response_of_known_epsilon() -> None:
    """epsilon-DP randomized response on 1,000 canaries: the 95% bound exceeds the true
    epsilon in at most about 5% of audits (here 200, allowing for their spread)."""
    rng = np.random.default_rng(7)
    epsilon, above = 1.0, 0
    for _ in range(200):
        included = rng.random(1000) < 0.5
        truthful = rng.random(1000) < math.exp(epsilon) / (1 + math.exp(epsilon))
        answer = np.where(truthful, included, ~included)
        bound = one_run_audit(included, answer.astype(float), n_guesses=[(500, 500)])
        above += bound.epsilon > epsilon
    assert above <= 20


def test_the_audit_abstains_and_splits_beta_over_the_counts_it_tries() -> None:
    rng = np.random.default_rng(0)
    included = rng.random(1000) < 0.5
    scores = included + rng.normal(0, 0.3, 1000)
    one = one_run_audit(included, scores, n_guesses=[(100, 100)])
    two = one_run_audit(included, scores, n_guesses=[(100, 100), (10, 10)])
    assert one.n_guesses == 200 and one.n_correct <= 200
    assert two.epsilon <= one.epsilon + 1e-12  # the same guesses at a stricter level
    assert one.ceiling == pytest.approx(one_run_epsilon(1000, 200, 200))  # all 200 right
    assert two.ceiling == pytest.approx(one_run_epsilon(1000, 200, 200, beta=0.025))
    assert guesses_from_scores(np.array([3.0, 1.0, 2.0]), 1, 0).tolist() == [1, -1, -1]
    with pytest.raises(ValidationError, match="add up to at most"):
        guesses_from_scores(np.zeros(3), 2, 2)
    with pytest.raises(ValidationError, match="One score per canary"):
        one_run_audit(included, scores[:10], n_guesses=[(1, 1)])


@pytest.mark.parametrize(("k", "n"), [(0, 50), (3, 100), (40, 100), (99, 100)])
def test_clopper_pearson_matches_the_exact_binomial_interval(k: int, n: int) -> None:
    # a one-sided 95% upper bound is the upper end of the two-sided 90% interval
    exact = binomtest(k, n).proportion_ci(confidence_level=0.90, method="exact").high
    assert clopper_pearson_upper(k, n, 0.05) == pytest.approx(exact, rel=1e-9)


def test_the_hypothesis_test_bound_follows_its_formula() -> None:
    fpr = clopper_pearson_upper(10, 500, 0.025)
    fnr = clopper_pearson_upper(20, 500, 0.025)
    expected = max(math.log((1 - 1e-5 - fnr) / fpr), math.log((1 - 1e-5 - fpr) / fnr))
    assert hypothesis_test_epsilon(10, 500, 20, 500, delta=1e-5) == pytest.approx(expected)
    assert hypothesis_test_epsilon(250, 500, 250, 500) == 0.0
