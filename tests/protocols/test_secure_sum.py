"""Secure sum against its centralized reference, its attack and its defence."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.attacks.contribution_readout import ContributionReadout
from fedsec.protocols.secure_sum import local_statistic, pooled_moments
from fedsec.registry import get
from fedsec.runner import RunConfig, run
from fedsec.scoring import ReconstructionError
from fedsec.views import build_view


def test_local_statistic_and_pooled_moments_match_numpy() -> None:
    rng = np.random.default_rng(0)
    blocks = [rng.normal(size=(n, 3)) for n in (4, 7, 5)]
    total = sum(local_statistic(b, "moments") for b in blocks)
    pooled = np.vstack(blocks)
    moments = pooled_moments(total, 3)
    np.testing.assert_allclose(moments["mean"], pooled.mean(axis=0))
    np.testing.assert_allclose(moments["variance"], pooled.var(axis=0))


@pytest.mark.parametrize("statistic", ["sum", "moments"])
def test_federated_sum_equals_centralized(statistic: str) -> None:
    result = run(RunConfig(protocol="secure-sum", dataset="wine",
                           partition="horizontal:parties=4", params={"statistic": statistic}))
    assert result.record.comparison.agrees
    np.testing.assert_allclose(result.outcome.values["sum"], result.reference.values["sum"],
                               rtol=1e-12)


def test_readout_recovers_every_contribution_under_plain() -> None:
    result = run(RunConfig(protocol="secure-sum", dataset="iris"))
    view = build_view(result.transcript, "aggregator", result.private)
    scores = ReconstructionError().score(ContributionReadout().run(view), result.private)
    assert scores["relative_error"] == 0.0
    assert scores["fraction_recovered"] == 1.0
    assert scores["advantage"] == 1.0


@pytest.mark.parametrize("backend", ["noise", "paillier", "ckks"])
def test_readout_falls_to_baseline_under_protecting_backends(backend: str) -> None:
    result = run(RunConfig(protocol="secure-sum", dataset="iris", backend=backend))
    assert result.record.comparison.agrees
    view = build_view(result.transcript, "aggregator", result.private)
    reconstruction = ContributionReadout().run(view)
    assert reconstruction.info["opaque"] == 5 and reconstruction.info["readable"] == 0
    scores = ReconstructionError().score(reconstruction, result.private)
    assert scores["relative_error"] == pytest.approx(scores["baseline_relative_error"])
    assert scores["advantage"] == pytest.approx(0.0)


def test_gaussian_noise_trades_accuracy_for_leakage() -> None:
    plain = run(RunConfig(protocol="secure-sum", dataset="iris"))
    noisy = run(RunConfig(protocol="secure-sum", dataset="iris",
                          defenses=[("gaussian-noise", {"sigma": 5.0})]))
    assert not noisy.record.comparison.agrees  # the sum is perturbed
    view = build_view(noisy.transcript, "aggregator", noisy.private)
    scores = ReconstructionError().score(ContributionReadout().run(view), noisy.private)
    plain_view = build_view(plain.transcript, "aggregator", plain.private)
    plain_scores = ReconstructionError().score(ContributionReadout().run(plain_view),
                                               plain.private)
    assert scores["relative_error"] > plain_scores["relative_error"]
    # the private truth is the party's own statistic, not what the defence sent
    np.testing.assert_array_equal(noisy.private["party/party1/value/vector"],
                                  plain.private["party/party1/value/vector"])


def test_defence_for_another_protocol_is_refused() -> None:
    from fedsec.errors import ValidationError
    from fedsec.interfaces import Defense
    from fedsec.registry import register, unregister

    @register("defense", "only-elsewhere")
    class OnlyElsewhere(Defense):
        protocols = frozenset({"fedcg-secure"})

    try:
        with pytest.raises(ValidationError, match="does not apply to protocol 'secure-sum'"):
            run(RunConfig(protocol="secure-sum", defenses=[("only-elsewhere", {})]))
    finally:
        unregister("defense", "only-elsewhere")
    assert get("defense", "gaussian-noise")


def test_capability_mismatch_fails_before_any_message(tmp_path) -> None:
    from fedsec.backends.plain import PlainBackend
    from fedsec.errors import CapabilityError
    from fedsec.registry import register, unregister

    @register("backend", "no-sum")
    class NoSum(PlainBackend):
        operations = frozenset({"add"})

    try:
        with pytest.raises(CapabilityError, match=r"'sum' \(available in: .*plain"):
            run(RunConfig(protocol="secure-sum", backend="no-sum"), tmp_path / "out")
    finally:
        unregister("backend", "no-sum")
    assert not (tmp_path / "out").exists()
