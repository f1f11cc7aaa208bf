"""Flower's fixed-clipping DP declared as a mechanism of ``flower-fedavg``'s own settings: the
accountant composes it over the rounds like the analytic Gaussian mechanism, matches Flower's
own accountant, and the report says the guarantee does not hold against the server that
noises the aggregate."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from fedsec import registry
from fedsec.privacy.accountant import DEFAULT_DELTA, described_privacy
from fedsec.privacy.gaussian import gaussian_epsilon
from fedsec.report.aggregate import configurations
from fedsec.report.privacy import privacy_rows

PLAIN = {"name": "plain", "params": {}}


def _described(**params: Any) -> dict[str, Any]:
    return {"name": "flower-fedavg", "params": params}


@pytest.mark.parametrize("dp", ["client", "server"])
@pytest.mark.parametrize(("noise_multiplier", "rounds"), [(0.8, 1), (1.0, 3), (2.0, 5)])
def test_flower_dp_composes_over_its_rounds_like_one_gaussian(dp: str, noise_multiplier: float,
                                                              rounds: int) -> None:
    privacy = described_privacy([], _described(dp=dp, clipping_norm=0.01, rounds=rounds,
                                               noise_multiplier=noise_multiplier), PLAIN)
    # rounds Gaussian releases of multiplier z are one Gaussian of multiplier z / sqrt(rounds)
    analytic = gaussian_epsilon(noise_multiplier / math.sqrt(rounds), DEFAULT_DELTA)
    assert abs(privacy["epsilon"] - analytic) < 1e-3
    assert privacy["noised"] and privacy["trusted"] == ["server"]
    (mechanism,) = privacy["mechanisms"]
    assert mechanism["protocol"] == "flower-fedavg" and mechanism["releases"] == rounds
    assert mechanism["noise_multiplier"] == pytest.approx(noise_multiplier)
    assert mechanism["sampling_rate"] == 1.0 and mechanism["sensitivity"] == 0.01


def test_the_declared_noise_is_the_noise_flowers_wrapper_adds() -> None:
    dp = pytest.importorskip("flwr.supercore.differential_privacy")
    protocol = registry.create("protocol", "flower-fedavg",
                               {"dp": "client", "clipping_norm": 0.3, "noise_multiplier": 1.7})
    (mechanism,) = protocol.mechanisms()
    for clients in (2, 5):  # declared on the sum of the clipped updates: n times Flower's mean
        assert mechanism.noise_scale / clients == pytest.approx(
            dp.compute_stdv(1.7, 0.3, clients), rel=1e-12)
        assert mechanism.sensitivity / clients == pytest.approx(0.3 / clients)


def test_the_rdp_cross_check_is_flowers_own_accountant() -> None:
    accounting = pytest.importorskip("flwr.supercore.privacy_accounting")
    rdp = pytest.importorskip("flwr.supercore.privacy_accounting.rdp_accountant")
    config = accounting.PrivacyConfig(
        target_delta=DEFAULT_DELTA, population_size=2,
        neighboring_relation=accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        sampling_method=accounting.SamplingMethod.NO_AMPLIFICATION)
    flower = rdp.RdpAccountant(config)
    flower.compose(accounting.GaussianPrivacyEvent(noise_multiplier=1.0, sample_size=2,
                                                   population_size=2), 3)
    ours = described_privacy([], _described(dp="client", noise_multiplier=1.0, rounds=3), PLAIN)
    assert ours["epsilon_rdp"] == pytest.approx(flower.get_privacy_spent().epsilon, rel=1e-9)
    assert ours["epsilon"] < ours["epsilon_rdp"]  # PLD is the tighter of the two


def test_without_dp_or_without_noise_flower_states_no_epsilon() -> None:
    none = described_privacy([], _described(dp="none"), PLAIN)
    assert none["epsilon"] is None and not none["noised"] and none["mechanisms"] == []
    assert none["reason"].startswith("no defence or protocol setting adds noise")
    clipping_only = described_privacy([], _described(dp="server", noise_multiplier=0.0), PLAIN)
    assert clipping_only["epsilon"] is None and clipping_only["noised"]
    assert clipping_only["reason"] == ("protocol 'flower-fedavg' declares noise of scale 0: "
                                       "epsilon is infinite")


def test_a_protocol_the_registry_cannot_rebuild_leaves_epsilon_unstated() -> None:
    privacy = described_privacy([], _described(dp="client", clipping_norm=-1.0), PLAIN)
    assert privacy["epsilon"] is None
    assert privacy["reason"].startswith("protocol 'flower-fedavg' could not be rebuilt")


def _cell(threat: str, advantage: float) -> dict[str, Any]:
    privacy = described_privacy([], _described(dp="client", noise_multiplier=1.0), PLAIN)
    return {"cell": threat, "configuration": "flower-fedavg | plain | no defence | dp=client",
            "status": "ok", "command": "", "metrics": {}, "agrees_with_reference": None,
            "cost": {}, "privacy": privacy,
            "config": {"protocol": "flower-fedavg", "dataset": "mnist5k", "backend": "plain",
                       "defense": None, "params": {"dp": "client"}, "seed": 0},
            "attacks": [{"attack": "flower-update-readout", "threat": threat,
                         "scorer": "reconstruction-error", "status": "ok", "targets": [],
                         "scores": {"advantage": advantage}}]}


def test_the_report_says_central_dp_does_not_hold_against_the_server() -> None:
    cells = [_cell("server", 0.9), _cell("client1", 0.0)]
    rows = {row[1]: row for row in privacy_rows(configurations(cells))}
    epsilon = f"{gaussian_epsilon(1.0, DEFAULT_DELTA):.3g}"
    assert rows["client1"][2] == f"{epsilon} (delta 1e-05)"
    assert rows["server"][2] == ("none against server: it sees the values before the noise "
                                 f"({epsilon} for what it releases)")
    assert rows["server"][5] == "flower-update-readout: advantage 0.90"


@pytest.mark.slow
def test_a_flower_run_with_client_side_dp_carries_the_accountants_epsilon(
        tmp_path: Path) -> None:
    pytest.importorskip("flwr.simulation")
    pytest.importorskip("torch")
    from fedsec.protocols.flower import tags
    from fedsec.runner import RunConfig, run

    result = run(RunConfig(protocol="flower-fedavg", seed=3, secret_seed=3, reference=False,
                           partition="horizontal:parties=2,size=1,names=client0+client1",
                           params={"batch_size": 0, "rounds": 2, "dp": "client",
                                   "clipping_norm": 0.01, "noise_multiplier": 1.0}), tmp_path)
    privacy, metrics = result.record.privacy, result.record.federated_metrics
    assert abs(privacy["epsilon"] - gaussian_epsilon(1.0 / math.sqrt(2), DEFAULT_DELTA)) < 1e-3
    (mechanism,) = privacy["mechanisms"]
    assert mechanism["releases"] == metrics[tags.DP_ROUNDS] == 2
    assert mechanism["noise_scale"] / metrics[tags.DP_SAMPLED_CLIENTS] == pytest.approx(
        metrics[tags.DP_NOISE_STDDEV])
