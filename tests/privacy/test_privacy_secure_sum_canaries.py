"""secure-sum's canary mode and the canary-guess attack: the one-run audit per adversary."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.privacy.canary import canary_scores, sign_block
from fedsec.privacy.gaussian import gaussian_sigma
from fedsec.protocols.secure_sum import (
    CANARY_INCLUDED,
    CANARY_META,
    CANARY_OFFSET,
    SecureSum,
    canary_signs,
)
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run
from fedsec.views import build_view

COALITION = "aggregator,party2,party3,party4,party5"
DELTA = 1e-5


def _run(*, canaries: int = 1000, backend: str = "plain", defense: dict[str, float] | None = None,
         secret_seed: int = 0, **params: Any) -> RunResult:
    return run(RunConfig(protocol="secure-sum", dataset="iris", seed=0, backend=backend,
                         params={"canaries": canaries, **params}, secret_seed=secret_seed,
                         defenses=[("gaussian-noise", defense)] if defense else []))


def _bound(result: RunResult, threat: str = "aggregator") -> dict[str, Any]:
    view = build_view(result.transcript, threat, result.private)
    reconstruction = create("attack", "canary-guess").run(view)
    return create("scorer", "canary-epsilon").score(reconstruction, result.private)


@pytest.mark.parametrize("params", [{"canaries": -1}, {"canary_norm": 0.0},
                                    {"canaries": 10, "canary_dimension": 5},
                                    {"canaries": 10, "canary_dimension": 24},
                                    {"canaries": True}])
def test_canary_parameters_are_validated(params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SecureSum(**params)


def test_a_run_refuses_an_unknown_canary_party_and_canaries_beyond_the_sensitivity() -> None:
    with pytest.raises(ValidationError, match="canary_party"):
        _run(canaries=10, canary_party="aggregator")
    with pytest.raises(ValidationError, match="exceed the sensitivity"):
        _run(canaries=10, canary_norm=2.0, defense={"sigma": 1.0, "clip": 1.0})


def test_canary_mode_extends_every_vector_and_keeps_the_sum_exact() -> None:
    result = _run(canaries=50, canary_norm=2.0)
    assert result.record.comparison.agrees  # the statistic still matches the reference
    assert result.record.federated_metrics["sum_relative_error"] == 0.0
    message = next(m for m in result.transcript.messages if m.tag == "secure_sum.contribution")
    assert set(CANARY_META) <= set(message.meta)
    included = result.private[f"party/party1/value/{CANARY_INCLUDED}"]
    assert included.shape == (50,) and 0 < included.sum() < 50
    start = message.meta[CANARY_OFFSET]
    signs = canary_signs(message.meta)  # public: regenerated from the metadata
    canaries = signs * (2.0 / np.sqrt(64))
    np.testing.assert_allclose(np.linalg.norm(canaries, axis=1), 2.0)
    block = result.private["party/party1/value/vector"][start:]
    np.testing.assert_allclose(block, canaries[included].sum(axis=0))  # the included ones
    np.testing.assert_allclose(block, sign_block(signs, included, 2.0))
    scores = canary_scores(block, canaries)  # about 1 when included, 0 when not
    assert abs(scores[included].mean() - 1) < 0.1 and abs(scores[~included].mean()) < 0.1
    for other in ("party2", "party5"):
        assert not result.private[f"party/{other}/value/vector"][start:].any()
        assert f"party/{other}/value/{CANARY_INCLUDED}" not in result.private


def test_canary_guess_does_not_apply_without_canaries() -> None:
    result = _run(canaries=0)
    view = build_view(result.transcript, "aggregator", result.private)
    assert "no canaries" in create("attack", "canary-guess").not_applicable(view)


def test_without_noise_the_aggregator_bound_exceeds_3_with_1000_canaries() -> None:
    scores = _bound(_run())
    print(f"no noise, 1,000 canaries: lower bound {scores['empirical_epsilon']:.3f}, "
          f"ceiling {scores['empirical_ceiling']:.3f}")
    assert scores["empirical_epsilon"] >= 3.0
    assert scores["empirical_epsilon"] <= scores["empirical_ceiling"]
    assert scores["advantage"] > 0.9 and scores["baseline_empirical_epsilon"] < 1.0


def _defence(epsilon: float, mode: str) -> dict[str, float]:
    return {"sigma": gaussian_sigma(epsilon, DELTA), mode: 1.0}


@pytest.mark.parametrize("epsilon", [2.0, 4.0, 8.0])
@pytest.mark.parametrize("mode", ["clip", "sensitivity"])
def test_the_empirical_bound_stays_below_the_accountant(epsilon: float, mode: str) -> None:
    for secret_seed in range(2):
        result = _run(defense=_defence(epsilon, mode), secret_seed=secret_seed)
        stated = result.record.privacy["epsilon"]
        assert stated == pytest.approx(epsilon, abs=1e-3)
        assert _bound(result)["empirical_epsilon"] <= stated


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [2.0, 4.0, 8.0])
def test_over_100_audits_the_bound_never_exceeds_the_accountant(epsilon: float) -> None:
    scores = [_bound(_run(defense=_defence(epsilon, "sensitivity"), secret_seed=seed))
              for seed in range(100)]
    for key in ("empirical_epsilon", "empirical_epsilon_any"):
        bounds = [s[key] for s in scores]
        print(f"accountant epsilon {epsilon}, {key}: bounds over 100 audits, min "
              f"{min(bounds):.3f}, median {np.median(bounds):.3f} "
              f"({np.median(bounds) / epsilon:.2f} of it), max {max(bounds):.3f}")
        assert max(bounds) <= epsilon
    # Half of epsilon at 4 and 8. At 2 the estimator itself is the limit: on the Gaussian
    # mechanism alone, 200 audits of 1,000 canaries give a median of 0.50 of epsilon
    # (tests/privacy/test_privacy_canary.py prints it), so the protocol is held to 0.4.
    share = 0.4 if epsilon == 2.0 else 0.5
    assert np.median([s["empirical_epsilon"] for s in scores]) >= share * epsilon


def test_masking_hides_the_canary_party_from_the_aggregator_but_not_from_a_coalition() -> None:
    result = _run(backend="noise", defense={"sigma": 0.5, "sensitivity": 1.0})
    alone, coalition = _bound(result), _bound(result, COALITION)
    assert alone["empirical_epsilon"] < coalition["empirical_epsilon"]
    plain = _bound(_run(defense={"sigma": 0.5, "sensitivity": 1.0}))
    assert coalition["empirical_epsilon"] == pytest.approx(plain["empirical_epsilon"])
