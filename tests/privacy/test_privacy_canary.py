"""The white-box canary audit of the Gaussian mechanism: without noise it is near its ceiling;
with noise calibrated to epsilon 2, 4 and 8 it stays below the accountant's epsilon."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.privacy.accountant import DEFAULT_DELTA, account
from fedsec.privacy.canary import (
    canary_scores,
    draw_canaries,
    draw_inclusion,
    gaussian_mechanism_audit,
    insert_canaries,
)
from fedsec.privacy.empirical import one_run_ceiling
from fedsec.privacy.gaussian import gaussian_sigma
from fedsec.privacy.mechanism import Mechanism


def test_scores_read_back_the_included_canaries_without_noise() -> None:
    rng = np.random.default_rng(0)
    canaries = draw_canaries(200, 4000, 1.5, rng)
    included = draw_inclusion(200, rng)
    scores = canary_scores(insert_canaries(np.zeros(4000), canaries, included), canaries)
    assert np.all(np.abs(scores - included) < 0.5)  # cross-talk of about sqrt(100/4000)
    with pytest.raises(ValidationError, match="do not fit"):
        insert_canaries(np.zeros(10), canaries, included)


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
