"""``flower-fedavg`` under Flower's SecAgg+ (4 clients, threshold 2, 1 round), recorded by
fedsec: every stage is in an intact transcript, the server's unmasked sum is Flower's
aggregate, the server alone (or with one client) reads no client, and the server with two
clients (the threshold) reads the others' updates to within Flower's quantization."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("flwr.simulation")
pytest.importorskip("torch")

from fedsec.attacks.flower import secagg_maths as sm
from fedsec.attacks.flower.secagg_coalition import FlowerSecAggCoalition, unmasked_sum
from fedsec.attacks.flower.secagg_traffic import secagg_rounds
from fedsec.cli.main import main
from fedsec.errors import FedsecError
from fedsec.private_store import load_private, truth_key
from fedsec.protocols.flower import tags
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run
from fedsec.testing import check_convergence_record
from fedsec.transcript import check_file, read_transcript
from fedsec.views import build_view

CLIENTS = ("client0", "client1", "client2", "client3")
PARTITION = f"horizontal:parties=4,names={'+'.join(CLIENTS)}"
SECAGG = {"secagg": True, "secagg_threshold": 2}


@pytest.fixture(scope="module")
def secagg_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, Path]:
    out = tmp_path_factory.mktemp("flower-secagg") / "run"
    result = run(RunConfig(protocol="flower-fedavg", seed=3, secret_seed=3, reference=False,
                           partition=PARTITION, params=SECAGG), out)
    return result, out


def _view(out: Path, threat: str):
    private = load_private(out / "private.npz")
    return build_view(read_transcript(out / "transcript.arrow"), threat, private), private


def test_every_secagg_stage_is_recorded_and_cross_checked(secagg_run, capsys) -> None:
    result, out = secagg_run
    path = out / "transcript.arrow"
    assert check_file(path).status == "intact"
    assert main(["inspect", str(path)]) == 0
    assert "intact" in capsys.readouterr().out
    transcript = read_transcript(path)
    heads = [m for m in transcript.messages if tags.N_ARRAYS in m.meta]
    metrics = result.record.federated_metrics
    # 4 clients x (4 SecAgg+ stages + 1 evaluate), each way; counted by the app's own Grid
    # and matched digest by digest with each client's log
    assert len(heads) == metrics["app_instructions"] + metrics["app_replies"] == 40
    assert metrics["digests_matched"] == 40
    for stage in tags.SECAGG_STAGES:
        staged = [m for m in heads if m.meta.get(tags.SECAGG_STAGE) == stage]
        assert {(m.tag, m.sender if m.sender != "server" else m.receiver) for m in staged} == {
            (tag, c) for tag in (tags.TRAIN_INSTRUCTION, tags.TRAIN_REPLY) for c in CLIENTS}
        assert {m.phase for m in staged} == {f"train.{stage}"}
    # the server never receives a client's model in the clear
    assert not [m for m in transcript.messages if m.tag == tags.TRAIN_REPLY_FITRES]


def test_the_server_unmasks_the_sum_to_flowers_aggregate(secagg_run) -> None:
    result, out = secagg_run
    view, _ = _view(out, "server")
    r = secagg_rounds(view)[1]
    assert r.threshold == 2 and sorted(r.parties.values()) == list(CLIENTS)
    mean = unmasked_sum(r)
    # Flower's legacy FedAvg then averages the workflow's aggregate, one copy per client,
    # weighted by the example counts: its own arithmetic, in its order
    counts = np.array([r.examples[n] for n in r.order])
    factors = counts / counts.sum()
    ours = mean * factors[0]
    for factor in factors[1:]:
        ours = ours + mean * factor
    flowers = result.private[truth_key(None, "flower", "aggregate", "round1")]
    np.testing.assert_array_equal(ours, flowers)


def test_the_truth_is_the_plaintext_update_inside_secaggplus_mod(secagg_run) -> None:
    _, out = secagg_run
    view, private = _view(out, "server")
    r = secagg_rounds(view)[1]
    for node, party in r.parties.items():
        update = private[truth_key(party, "value", "update", "round1")]
        model = private[truth_key(party, "value", "model", "round1")]
        np.testing.assert_array_equal(update, model - r.global_model[node])
        assert np.linalg.norm(update) > 0
        # the client's own secrets are in its holdings, matching the keys it published
        pk1 = private[truth_key(party, "value", *tags.secagg_key(1, "pk1").split("/"))]
        assert bytes(pk1) == r.public_keys[node][0]
        assert private[truth_key(party, "value", "secagg", "round1", "rd_seed")].size == 32


@pytest.mark.parametrize("threat", ["server", "server,client1"])
def test_below_the_threshold_the_coalition_stays_at_baseline(secagg_run, threat) -> None:
    _, out = secagg_run
    view, private = _view(out, threat)
    reconstruction = create("attack", "flower-secagg-coalition").run(view)
    check_convergence_record(FlowerSecAggCoalition, reconstruction.info)
    members = threat.count(",")
    assert len(reconstruction.estimates) == 4 - members
    assert reconstruction.info["recovered"] == 0
    for facts in reconstruction.info["targets"].values():
        assert facts["sk1_shares_held"] == members < facts["threshold"] == 2
        assert "pairwise masks" in facts["lacks"]
    for key, estimate in reconstruction.estimates.items():
        np.testing.assert_array_equal(estimate, reconstruction.baseline[key])
    scores = create("scorer", "reconstruction-error").score(reconstruction, private)
    assert scores["relative_error"] == scores["baseline_relative_error"] > 0.05
    # the plain read-out sees only masked replies: baseline too
    readout = create("attack", "flower-update-readout").run(view)
    scores = create("scorer", "reconstruction-error").score(readout, private)
    assert scores["relative_error"] == scores["baseline_relative_error"] > 0.05


@pytest.mark.parametrize("threat", ["server,client1,client2", "server,client0,client1,client2"])
def test_at_the_threshold_the_coalition_reads_the_others(secagg_run, threat) -> None:
    _, out = secagg_run
    view, private = _view(out, threat)
    reconstruction = create("attack", "flower-secagg-coalition").run(view)
    again = create("attack", "flower-secagg-coalition").run(view)
    assert all(np.array_equal(v, again.estimates[k]) for k, v in reconstruction.estimates.items())
    targets = [c for c in CLIENTS if c not in threat.split(",")]
    assert reconstruction.info["recovered"] == len(targets) == len(reconstruction.estimates)
    r = secagg_rounds(view)[1]
    clip, levels = float(r.settings["clipping_range"]), int(r.settings["target_range"])
    for client in targets:
        key = truth_key(client, "value", "update", "round1")
        facts = reconstruction.info["targets"][f"{client}/round1"]
        assert facts["sk1_rebuilt"] and "lacks" not in facts
        error = np.abs(reconstruction.estimates[key] - private[key])
        assert error.max() <= facts["error_bound"]
        # exactly the integers Flower's secaggplus_mod drew: each within its stochastic
        # rounding of the client's float32 model, scaled and shifted as Flower does in float32
        model = private[truth_key(client, "value", "model", "round1")].astype(np.float32)
        weight = facts["weight"]
        scaled = (np.clip(model * np.float32(weight), -clip, clip) + np.float32(clip)) \
            * np.float32(levels / (2 * clip))
        estimate_model = reconstruction.estimates[key] + r.global_model[r.node_of(client)]
        integers = np.rint((estimate_model * weight + clip) * levels / (2 * clip))
        assert np.all((integers == np.ceil(scaled)) | (integers == np.ceil(scaled) - 1))
    scores = create("scorer", "reconstruction-error").score(reconstruction, private)
    assert scores["relative_error"] < 1e-3 < 0.05 < scores["baseline_relative_error"]
    assert scores["fraction_recovered"] == 1.0


def test_a_coalition_without_the_server_does_not_apply(secagg_run) -> None:
    _, out = secagg_run
    view, _ = _view(out, "client1,client2")
    reason = create("attack", "flower-secagg-coalition").not_applicable(view)
    assert reason is not None and "must include the server" in reason


def test_secagg_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="secagg_shares"):
        create("protocol", "flower-fedavg",
               {"secagg": True, "secagg_threshold": 3, "secagg_shares": 3})
    with pytest.raises(ValueError, match="secagg_modulus_range"):
        create("protocol", "flower-fedavg",
               {"secagg": True, "secagg_modulus_range": 3 * 2**22})
    with pytest.raises(ValueError, match="secagg_threshold"):
        create("protocol", "flower-fedavg", {"secagg_threshold": 1})


def test_a_threshold_above_the_clients_is_refused_before_flower_starts(tmp_path) -> None:
    with pytest.raises((FedsecError, ValueError), match="at most the number of clients"):
        run(RunConfig(protocol="flower-fedavg", seed=0, reference=False,
                      params={"secagg": True, "secagg_threshold": 3}), tmp_path / "run")


def test_the_maths_matches_flowers_primitives() -> None:
    from flwr.common.secure_aggregation.crypto.shamir import create_shares
    from flwr.common.secure_aggregation.crypto.symmetric_encryption import (
        encrypt,
        generate_shared_key,
    )
    from flwr.common.secure_aggregation.secaggplus_utils import (
        pseudo_rand_gen,
        share_keys_plaintext_concat,
    )
    from flwr.supercore.primitives.asymmetric import (
        generate_key_pairs,
        private_key_to_bytes,
        public_key_to_bytes,
    )

    (sk_a, pk_a), (sk_b, pk_b) = generate_key_pairs(), generate_key_pairs()
    key = sm.shared_key(private_key_to_bytes(sk_a), public_key_to_bytes(pk_b))
    assert key == generate_shared_key(sk_a, pk_b) == generate_shared_key(sk_b, pk_a)
    secret = private_key_to_bytes(sk_a)
    for threshold, n in ((2, 2), (2, 4), (3, 5)):
        shares = create_shares(secret, threshold, n)
        assert sm.combine_shares(shares[-threshold:]) == secret
        assert sm.combine_shares(shares) == secret
    with pytest.raises(ValueError):
        sm.combine_shares(create_shares(secret, 3, 5)[:2])
    plaintext = share_keys_plaintext_concat(11, 22, b"seed-share", b"key-share")
    assert sm.split_share_plaintext(sm.decrypt(key, encrypt(key, plaintext))) == (
        11, 22, b"seed-share", b"key-share")
    shapes = [(3, 2), (4,), ()]
    for ours, theirs in zip(sm.prg(key, 2**32, shapes), pseudo_rand_gen(key, 2**32, shapes),
                            strict=True):
        np.testing.assert_array_equal(ours, theirs)
