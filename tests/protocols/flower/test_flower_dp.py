"""``flower-fedavg`` under Flower's fixed-clipping DP, and gradient inversion of its FedSGD
updates: one FedSGD round of two clients holding one MNIST image each, with client-side DP
(``fixedclipping_mod`` and ``DifferentialPrivacyClientSideFixedClipping``). What crosses is
each update clipped to the norm, so the server's read-out no longer gives the plaintext
update; the noise is the server's, on the aggregate; the run's metrics say which DP ran. The
clipped update is still the gradient's direction: Inverting Gradients rebuilds each client's
image to DLG's published bar (MSE < 1e-4 on one image, as
``tests/attacks/test_inversion_acceptance.py`` holds the maths to). The runs without
client-side clipping (server-side DP, undefended FedSGD with DLG) are marked slow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("flwr.simulation")
pytest.importorskip("torch")

from fedsec.attacks.flower.gradient_inversion import FlowerGradientInversion, image_shape
from fedsec.attacks.flower.traffic import messages, update_of
from fedsec.errors import ValidationError
from fedsec.private_store import load_private, truth_key
from fedsec.protocols.flower import tags
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run
from fedsec.testing import check_convergence_record
from fedsec.transcript import read_transcript
from fedsec.views import build_view

CLIENTS = ("client0", "client1")
ONE_IMAGE_EACH = f"horizontal:parties=2,size=1,names={'+'.join(CLIENTS)}"
CLIPPING, NOISE = 0.01, 1.0
FEDSGD = {"batch_size": 0, "local_epochs": 1, "lr": 0.1}
DLG_BAR = 1e-4
"""DLG's published result: one image rebuilt to a pixel MSE below 1e-4 (pixels in [0, 1])."""


def _run(out: Path, **params: object) -> RunResult:
    return run(RunConfig(protocol="flower-fedavg", seed=3, secret_seed=3, reference=False,
                         partition=ONE_IMAGE_EACH, params={**FEDSGD, **params}), out)


@pytest.fixture(scope="module")
def client_dp(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, Path]:
    out = tmp_path_factory.mktemp("flower-dp") / "run"
    return _run(out, dp="client", clipping_norm=CLIPPING, noise_multiplier=NOISE), out


def _server_view(out: Path):
    private = load_private(out / "private.npz")
    return build_view(read_transcript(out / "transcript.arrow"), "server", private), private


def test_the_metrics_record_the_dp_the_wrapper_ran(client_dp) -> None:
    result, _ = client_dp
    metrics = result.record.federated_metrics
    assert metrics[tags.DP_PLACEMENT] == "client"
    assert metrics[tags.DP_CLIPPING_NORM] == CLIPPING
    assert metrics[tags.DP_NOISE_MULTIPLIER] == NOISE
    assert metrics[tags.DP_ROUNDS] == 1
    assert metrics[tags.DP_SAMPLED_CLIENTS] == metrics[tags.DP_POPULATION] == 2
    assert metrics[tags.DP_NOISE_STDDEV] == pytest.approx(NOISE * CLIPPING / 2)
    assert metrics["digests_matched"] == 8


def test_what_crosses_is_clipped_and_the_readout_misses_the_plaintext(client_dp) -> None:
    _, out = client_dp
    view, private = _server_view(out)
    instructions = {m.message_id: m for m in messages(view, tags.TRAIN, tags.INSTRUCTION)}
    assert all(m.meta[tags.CONFIGS]["config"][tags.CLIPPING_NORM_ENTRY] == CLIPPING
               for m in instructions.values())
    for reply in messages(view, tags.TRAIN, tags.REPLY):
        crossed = update_of(reply, instructions[reply.meta[tags.REPLY_TO]])
        plaintext = private[truth_key(reply.head.sender, "value", "update", "round1")]
        assert np.linalg.norm(crossed) <= CLIPPING * (1 + 1e-5)  # float32 rounding only
        assert np.linalg.norm(plaintext) > 10 * CLIPPING  # the clipping bit
        # clipping scales the update: its direction is the plaintext's
        cosine = crossed @ plaintext / (np.linalg.norm(crossed) * np.linalg.norm(plaintext))
        assert cosine > 1 - 1e-4
    reconstruction = create("attack", "flower-update-readout").run(view)
    scores = create("scorer", "reconstruction-error").score(reconstruction, private)
    assert scores["n_targets"] == 2
    assert scores["relative_error"] > 0.9  # undefended: 0 (test_flower_simulation.py)


def test_the_server_noises_the_aggregate_by_the_recorded_stddev(client_dp) -> None:
    result, out = client_dp
    private = load_private(out / "private.npz")
    clipped_mean = private[truth_key(None, "flower", "aggregate", "round1")]
    released = np.concatenate([np.asarray(v, dtype=np.float64)
                               for k, v in result.outcome.values.items()
                               if k.startswith("model/")])
    noise = released - clipped_mean
    stddev = result.record.federated_metrics[tags.DP_NOISE_STDDEV]
    assert abs(noise.mean()) < 0.05 * stddev
    assert noise.std() == pytest.approx(stddev, rel=0.03)


def test_inverting_gradients_rebuilds_each_clipped_image_to_dlgs_bar(client_dp) -> None:
    _, out = client_dp
    view, private = _server_view(out)
    attack = create("attack", "flower-gradient-inversion",
                    {"method": "ig", "steps": 500, "low": 0.0, "high": 1.0})
    reconstruction = attack.run(view)
    check_convergence_record(FlowerGradientInversion, reconstruction.info)
    assert reconstruction.info["convergence"]["converged"]
    scores = create("scorer", "pixel-recovery", {"data_range": 1.0}).score(
        reconstruction, private)
    assert scores["n_targets"] == 2
    for key, entry in scores["per_target"].items():
        assert entry["mse"] < DLG_BAR, (key, entry)
        assert entry["ssim"] > 0.99 and entry["baseline_ssim"] < 0.1
    for client, described in reconstruction.info["targets"].items():
        assert described["clipped"] and described["labels"] == "read"
        labels = private[truth_key(client, "value", "training", "y")]
        assert described["label_values"] == labels.tolist()  # iDLG ignores the scale


def test_the_attack_is_not_applicable_to_another_round_or_to_a_client_alone(
        client_dp) -> None:
    _, out = client_dp
    view, _ = _server_view(out)
    transcript = read_transcript(out / "transcript.arrow")
    alone = build_view(transcript, "client0", load_private(out / "private.npz"))
    reason = create("attack", "flower-gradient-inversion").not_applicable(alone)
    assert reason is not None and "no FedSGD update" in reason
    assert create("attack", "flower-gradient-inversion", {"round": 2}).not_applicable(
        view) is not None


@pytest.mark.parametrize(("params", "name"), [
    ({"dp": "local"}, "dp"), ({"dp": "client", "clipping_norm": 0.0}, "clipping_norm"),
    ({"noise_multiplier": -0.5}, "noise_multiplier"), ({"batch_size": -1}, "batch_size"),
    ({"dp": "server", "secagg": True}, "dp")])
def test_bad_dp_parameters_are_refused_by_name(params, name) -> None:
    with pytest.raises(ValidationError, match=f"'{name}' parameter of protocol 'flower-fedavg'"):
        create("protocol", "flower-fedavg", params)


@pytest.mark.parametrize(("params", "name"), [
    ({"method": "adam"}, "method"), ({"labels": "guess"}, "labels"), ({"steps": 0}, "steps"),
    ({"low": 1.0, "high": 0.0}, "low")])
def test_bad_attack_parameters_are_refused_by_name(params, name) -> None:
    with pytest.raises(ValidationError, match=f"'{name}'"):
        create("attack", "flower-gradient-inversion", params)


def test_rows_of_a_square_length_are_inverted_as_images() -> None:
    assert image_shape(784) == (28, 28) and image_shape(30) == (30,)


@pytest.mark.slow
def test_server_side_dp_leaves_the_plaintext_on_the_wire(tmp_path: Path) -> None:
    result = _run(tmp_path / "run", dp="server", clipping_norm=CLIPPING,
                  noise_multiplier=NOISE)
    assert result.record.federated_metrics[tags.DP_PLACEMENT] == "server"
    view, private = _server_view(tmp_path / "run")
    assert not [m for m in messages(view, tags.TRAIN, tags.INSTRUCTION)
                if tags.CLIPPING_NORM_ENTRY in m.meta[tags.CONFIGS]["config"]]
    reconstruction = create("attack", "flower-update-readout").run(view)
    scores = create("scorer", "reconstruction-error").score(reconstruction, private)
    assert scores["relative_error"] == 0.0


@pytest.mark.slow
def test_dlg_rebuilds_each_undefended_fedsgd_image_to_its_published_bar(
        tmp_path: Path) -> None:
    _run(tmp_path / "run")
    view, private = _server_view(tmp_path / "run")
    for labels in ("read", "joint"):  # iDLG, and DLG as published
        reconstruction = create("attack", "flower-gradient-inversion",
                                {"method": "dlg", "labels": labels}).run(view)
        assert reconstruction.info["convergence"]["converged"]
        scores = create("scorer", "pixel-recovery", {"data_range": 1.0}).score(
            reconstruction, private)
        assert all(e["mse"] < DLG_BAR for e in scores["per_target"].values()), scores
