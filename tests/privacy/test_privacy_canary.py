"""The white-box canary audit of the Gaussian mechanism: without noise it is near its ceiling;
with noise calibrated to epsilon 2, 4 and 8 it stays below the accountant's epsilon."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.privacy.accountant import DEFAULT_DELTA, account
from fedsec.privacy.canary import (
    canary_scores,
    draw_canary_signs,
    draw_inclusion,
    gaussian_mechanism_audit,
    sign_block,
    sign_scores,
)
from fedsec.privacy.empirical import one_run_ceiling
from fedsec.privacy.gaussian import gaussian_sigma
from fedsec.privacy.mechanism import Mechanism


def test_scores_read_back_the_included_canaries_exactly_without_noise() -> None:
    rng = np.random.default_rng(0)
    signs = draw_canary_signs(200, 256, rng)
    assert len({row.tobytes() for row in signs}) == 200  # distinct rows
    gram = signs.astype(int) @ signs.T.astype(int)
    np.testing.assert_array_equal(gram, 256 * np.eye(200, dtype=int))  # exactly orthogonal
    included = draw_inclusion(200, rng)
    block = sign_block(signs, included, 1.5)
    np.testing.assert_allclose(sign_scores(block, signs, 1.5), included, atol=1e-12)
    canaries = signs * (1.5 / np.sqrt(256))  # the same through the explicit canaries
    np.testing.assert_allclose(canary_scores(block, canaries), included, atol=1e-12)
    for count, dimension in ((200, 100), (10, 24), (0, 8)):
        with pytest.raises(ValidationError, match="power of two"):
            draw_canary_signs(count, dimension, rng)


def test_different_seeds_draw_different_canaries() -> None:
    first = draw_canary_signs(1000, 1024, np.random.default_rng(5))
    second = draw_canary_signs(1000, 1024, np.random.default_rng(6))
    assert abs(first.mean()) < 0.01  # the column flips leave no sign favoured
    assert np.mean(first == second) == pytest.approx(0.5, abs=0.01)


def test_without_noise_1000_canaries_give_a_bound_of_at_least_3() -> None:
    bound = gaussian_mechanism_audit(1000, 0.0, 1.0, np.random.default_rng(1),
                                     delta=DEFAULT_DELTA)
    print(f"no noise, 1,000 canaries: lower bound {bound.epsilon:.3f}, ceiling at the audit's "
          f"level {bound.ceiling:.3f} (all guessed at 95%: {one_run_ceiling(1000):.3f})")
    assert bound.epsilon >= 3.0 and bound.n_correct == bound.n_guesses


@pytest.mark.parametrize("epsilon", [2.0, 4.0, 8.0])
def test_with_calibrated_noise_the_bound_stays_below_the_accountants_epsilon(
        epsilon: float) -> None:
    sigma = gaussian_sigma(epsilon, DEFAULT_DELTA)
    accounted = account([Mechanism(distribution="gaussian", noise_scale=sigma, sensitivity=1.0,
                                   sensitivity_source="clipping", releases=1, unit="a canary")])
    assert accounted == pytest.approx(epsilon, abs=1e-3)
    rng = np.random.default_rng(int(epsilon))
    bounds = [gaussian_mechanism_audit(1000, sigma, 1.0, rng, delta=DEFAULT_DELTA).epsilon
              for _ in range(5)]
    print(f"epsilon {epsilon:g}: accountant {accounted:.3f}, one-run bounds "
          f"{', '.join(f'{b:.2f}' for b in bounds)}")
    assert max(bounds) < accounted
    assert max(bounds) > 0  # the audit sees the canaries through the noise


@pytest.mark.parametrize("epsilon", [2.0, 4.0, 8.0])
def test_under_the_gaussian_claim_the_bound_reaches_about_half_the_accountant(
        epsilon: float) -> None:
    sigma = gaussian_sigma(epsilon, DEFAULT_DELTA)
    rng = np.random.default_rng(100 + int(epsilon))
    audits = [gaussian_mechanism_audit(1000, sigma, 1.0, rng, delta=DEFAULT_DELTA,
                                       claim=claim)
              for _ in range(40) for claim in ("gaussian", "any")]
    gaussian = [a.epsilon for a in audits if a.claim == "gaussian"]
    any_claim = [a.epsilon for a in audits if a.claim == "any"]
    print(f"epsilon {epsilon:g}, 40 audits: Gaussian claim median "
          f"{np.median(gaussian) / epsilon:.2f} of epsilon (max {max(gaussian):.2f}), "
          f"(epsilon, delta) claim median {np.median(any_claim) / epsilon:.2f}")
    assert max(gaussian) < epsilon and max(any_claim) < epsilon
    assert np.median(gaussian) > np.median(any_claim)  # the stronger claim is tested further
    assert np.median(gaussian) >= (0.4 if epsilon == 2.0 else 0.5) * epsilon
