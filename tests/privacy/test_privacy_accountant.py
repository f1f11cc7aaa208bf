"""Declared mechanisms and the accountant: epsilon matches the analytic Gaussian mechanism,
composes as the Gaussian does, and reaches result.json and the audit's cells."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from fedsec import registry
from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.errors import ValidationError
from fedsec.privacy.accountant import DEFAULT_DELTA, account, privacy_summary, run_privacy
from fedsec.privacy.gaussian import gaussian_delta, gaussian_epsilon, gaussian_sigma
from fedsec.privacy.mechanism import BACKEND_NOTES, Mechanism
from fedsec.runner import RunConfig, run


def _gaussian(noise: float, sensitivity: float = 1.0, releases: int = 1) -> Mechanism:
    return Mechanism(distribution="gaussian", noise_scale=noise, sensitivity=sensitivity,
                     sensitivity_source="clipping", releases=releases, unit="one party")


def _delta_by_integration(epsilon: float, sigma: float, sensitivity: float) -> float:
    """The slow oracle: the privacy loss of the Gaussian mechanism is N(mu, 2 mu) with
    mu = s^2 / (2 sigma^2), and delta(epsilon) = E[(1 - e^(epsilon - L))_+] over it."""
    mu = sensitivity**2 / (2 * sigma**2)
    sd = math.sqrt(2 * mu)

    def integrand(loss: float) -> float:
        return (1 - math.exp(epsilon - loss)) * norm.pdf(loss, mu, sd)

    value, _ = quad(integrand, epsilon, mu + 40 * sd, limit=200, epsabs=1e-13)
    return value


@pytest.mark.parametrize(("epsilon", "sigma", "sensitivity"),
                         [(0.5, 1.0, 1.0), (1.0, 2.0, 1.0), (2.0, 3.0, 2.5), (4.0, 0.8, 1.0)])
def test_the_analytic_gaussian_delta_matches_integration_of_the_privacy_loss(
        epsilon: float, sigma: float, sensitivity: float) -> None:
    assert gaussian_delta(epsilon, sigma, sensitivity) == pytest.approx(
        _delta_by_integration(epsilon, sigma, sensitivity), rel=1e-6, abs=1e-12)


def test_epsilon_and_sigma_invert_the_analytic_delta() -> None:
    for sigma in (0.5, 1.0, 3.0):
        epsilon = gaussian_epsilon(sigma, 1e-5)
        assert gaussian_delta(epsilon, sigma) == pytest.approx(1e-5, rel=1e-6)
        assert gaussian_sigma(epsilon, 1e-5) == pytest.approx(sigma, rel=1e-6)
    with pytest.raises(ValidationError, match="sigma > 0"):
        gaussian_epsilon(0.0, 1e-5)


@pytest.mark.parametrize("sigma", [0.6, 1.0, 2.0, 5.0])
def test_the_pld_accountant_matches_the_analytic_gaussian_for_one_release(sigma: float) -> None:
    for sensitivity in (1.0, 0.25):
        pld = account([_gaussian(sigma * sensitivity, sensitivity)])
        assert abs(pld - gaussian_epsilon(sigma, DEFAULT_DELTA)) < 1e-3
        # RDP is a valid but looser bound: the cross-check is never below the tight value
        assert account([_gaussian(sigma * sensitivity, sensitivity)], accountant="rdp") >= pld


def test_releases_compose_like_one_gaussian_with_sigma_over_root_k() -> None:
    # k Gaussian releases of noise sigma are exactly one of noise sigma / sqrt(k)
    composed = account([_gaussian(4.0, releases=9)])
    assert composed == pytest.approx(gaussian_epsilon(4.0 / 3.0, DEFAULT_DELTA), abs=1e-2)
    assert account([_gaussian(4.0), _gaussian(4.0, releases=8)]) == pytest.approx(composed,
                                                                                 abs=1e-2)


def test_a_mechanism_declaration_refuses_inconsistent_data() -> None:
    with pytest.raises(ValidationError, match="needs a source"):
        Mechanism(distribution="gaussian", noise_scale=1.0, sensitivity=1.0,
                  sensitivity_source="none", releases=1, unit="u")
    with pytest.raises(ValidationError, match="releases must be an int >= 1"):
        Mechanism(distribution="gaussian", noise_scale=1.0, sensitivity=1.0,
                  sensitivity_source="clipping", releases=0, unit="u")
    with pytest.raises(ValidationError, match="distribution must be one of"):
        Mechanism(distribution="laplace", noise_scale=1.0, sensitivity=1.0,
                  sensitivity_source="clipping", releases=1, unit="u")


def test_gaussian_noise_declares_its_sensitivity_or_that_it_has_none() -> None:
    clipped = registry.create("defense", "gaussian-noise", {"sigma": 2.0, "clip": 0.5})
    declared = registry.create("defense", "gaussian-noise", {"sigma": 2.0, "sensitivity": 3.0})
    unbounded = registry.create("defense", "gaussian-noise", {"sigma": 2.0})
    silent = registry.create("defense", "gaussian-noise", {"sigma": 0.0, "clip": 1.0})
    assert clipped.mechanism({}).sensitivity_source == "clipping"
    assert clipped.mechanism({}).noise_multiplier == 4.0
    assert declared.mechanism({}).sensitivity_source == "declared"
    assert unbounded.mechanism({}).sensitivity is None
    assert silent.mechanism({}) is None
    summary = run_privacy([unbounded], {}, backend="plain")
    assert summary["epsilon"] is None and summary["noised"]
    assert "relies on no sensitivity bound" in summary["reason"]
    with pytest.raises(ValidationError, match="set one"):
        registry.create("defense", "gaussian-noise", {"clip": 1.0, "sensitivity": 1.0})


def test_defences_without_noise_declare_none_and_backends_say_they_are_not_dp() -> None:
    for name in ("random-landmarks", "few-landmarks", "random-kernel-width",
                 "epsilon-dr-downsampling"):
        assert registry.create("defense", name, {}).mechanism({}) is None
    for backend in ("plain", "noise", "paillier", "ckks"):
        summary = privacy_summary([], backend=backend)
        assert summary["epsilon"] is None and not summary["noised"]
        assert BACKEND_NOTES[backend] in summary["reason"]


def test_update_noise_is_accounted_over_its_rounds() -> None:
    defense = registry.create("defense", "update-noise", {"clip": 2.0, "noise_multiplier": 3.0})
    mechanism = defense.mechanism({"fedavg_rounds": 4})
    assert (mechanism.releases, mechanism.noise_multiplier) == (4, 3.0)
    epsilon = run_privacy([defense], {"fedavg_rounds": 4}, backend="noise")["epsilon"]
    assert epsilon == pytest.approx(gaussian_epsilon(1.5, DEFAULT_DELTA), abs=1e-2)
    clip_only = registry.create("defense", "update-noise", {"noise_multiplier": 0.0})
    assert clip_only.mechanism({"fedavg_rounds": 4}) is None


def test_secure_sum_with_clipped_gaussian_noise_states_the_analytic_epsilon(
        tmp_path: Path) -> None:
    """The acceptance check: one release of the Gaussian mechanism, its epsilon in
    result.json equal to Balle and Wang's to 1e-3."""
    config = RunConfig(protocol="secure-sum", dataset="iris", seed=3,
                       defenses=[("gaussian-noise", {"sigma": 1.5, "clip": 2.0})])
    result = run(config, tmp_path / "run")
    written = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    privacy = written["privacy"]
    assert privacy["delta"] == DEFAULT_DELTA
    assert abs(privacy["epsilon"] - gaussian_epsilon(1.5, DEFAULT_DELTA, 2.0)) < 1e-3
    assert privacy["epsilon_rdp"] >= privacy["epsilon"]
    assert privacy["mechanisms"][0]["sensitivity_source"] == "clipping"
    assert result.record.privacy == privacy
    plain = run(RunConfig(protocol="secure-sum", dataset="iris", seed=3))
    assert plain.record.privacy["epsilon"] is None and not plain.record.privacy["noised"]


def test_the_clip_is_applied_to_what_each_party_sends() -> None:
    config = RunConfig(protocol="secure-sum", dataset="iris", seed=3,
                       defenses=[("gaussian-noise", {"sigma": 1e-9, "clip": 2.0})])
    sent = [m for m in run(config).transcript.messages if m.tag == CONTRIBUTION_TAG]
    norms = [float(np.linalg.norm(np.asarray(m.payload))) for m in sent]
    assert len(norms) == 5 and norms == pytest.approx([2.0] * 5, abs=1e-6)
