"""Flower's deployment engine: a SuperLink and two SuperNodes as processes of their own on
127.0.0.1 (TLS), started and stopped by fedsec, the recorder's rows relayed from the ServerApp
process. One run of the numpy fixture app (2 clients, 1 round) in the default suite; the
shipped torch app is slow. The certificates, app folder and node naming are checked without
starting Flower."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest
import tomllib

pytest.importorskip("flwr.simulation")

from fedsec.errors import FedsecError
from fedsec.private_store import load_private, truth_key
from fedsec.protocols.flower import deployment, relay, spool, tags
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.transcript import check_file, read_transcript
from fedsec.views import build_view

APP = Path(__file__).parent / "numpy_app"


def _flower_processes_of(folder: str) -> list[int]:
    """Pids of live processes whose command line names ``folder`` (a run's spool)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if folder in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


def _fedavg_of(view_messages: list, reply_tag: str, arrays_tag: str) -> np.ndarray:
    """FedAvg of the train replies in a View, by Flower's arithmetic and order."""
    replies = [m for m in view_messages if m.tag == reply_tag]
    weights = [float(m.meta[tags.METRICS]["metrics"]["num-examples"]) for m in replies]
    total: dict[str, np.ndarray] = {}
    for reply, weight in zip(replies, weights, strict=True):
        factor = weight / sum(weights)
        for row in view_messages:
            if row.tag == arrays_tag and row.meta[tags.MESSAGE_ID] == reply.meta[tags.MESSAGE_ID]:
                name = row.meta[tags.ARRAY]
                total[name] = (row.payload * factor if name not in total
                               else total[name] + row.payload * factor)
    return np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in total.values()])


def test_a_deployed_app_is_recorded_intact_and_stopped(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "run"
    seen: list[str] = []
    spools: list[Path] = []
    make_spool = spool.make_spool
    monkeypatch.setattr(spool, "make_spool", lambda: spools.append(make_spool()) or spools[-1])
    result = run(RunConfig(protocol="flower-app", seed=2, secret_seed=2, reference=False,
                           params={"app": str(APP), "engine": "deployment", "timeout": 240.0}),
                 out, progress=seen.append)
    assert any("SuperLink" in line and "TLS" in line for line in seen)
    assert check_file(out / "transcript.arrow").status == "intact"
    transcript = read_transcript(out / "transcript.arrow")
    heads = [m for m in transcript.messages if tags.N_ARRAYS in m.meta]
    metrics = result.record.federated_metrics
    assert len(heads) == metrics["counts.messages"] == metrics["digests_matched"] == 8
    assert {m.meta[tags.PARTITION_ID] for m in heads if m.receiver == "client1"} == {1}
    view = build_view(transcript, "server")
    ours = _fedavg_of(list(view.messages), tags.TRAIN_REPLY, tags.TRAIN_REPLY_ARRAYS)
    np.testing.assert_array_equal(ours, result.outcome.values["state/aggregate"])
    private = load_private(out / "private.npz")
    assert truth_key("client0", "value", "update", "round1") in private
    kept = out / "parties" / "flower"  # the processes' logs outlive the spool, owner-only
    names = {path.name for path in kept.iterdir()}
    assert {"superlink.log", "serverapp.log", "flwr.log"} <= names
    assert len([n for n in names if n.endswith(".jsonl")]) == 2  # each client's digest log
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in kept.iterdir())
    (where,) = spools
    assert not where.exists()  # the spool (certificates, logs) is gone, and so is every process
    assert _flower_processes_of(str(where)) == []


@pytest.mark.slow
def test_the_shipped_app_deployed_gives_flowers_aggregate_and_every_update(
        tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run(RunConfig(protocol="flower-fedavg", seed=3, secret_seed=3, reference=False,
                           params={"engine": "deployment"}), out)
    assert check_file(out / "transcript.arrow").status == "intact"
    metrics = result.record.federated_metrics
    assert metrics["app_instructions"] + metrics["app_replies"] == metrics["digests_matched"] == 8
    view = build_view(read_transcript(out / "transcript.arrow"), "server",
                      load_private(out / "private.npz"))
    ours = _fedavg_of(list(view.messages), tags.TRAIN_REPLY, tags.TRAIN_REPLY_ARRAYS)
    np.testing.assert_array_equal(
        ours, result.private[truth_key(None, "flower", "aggregate", "round1")])
    reconstruction = create("attack", "flower-update-readout").run(view)
    scores = create("scorer", "reconstruction-error").score(reconstruction, result.private)
    assert scores["n_targets"] == 2 and scores["relative_error"] == 0.0


@pytest.mark.slow
def test_a_failing_server_app_is_reported_from_its_log(tmp_path: Path) -> None:
    failure = r"(?s)ended 'finished:failed'.*serverapp\.log.*negative dimensions"
    with pytest.raises(FedsecError, match=failure):
        run(RunConfig(protocol="flower-app", reference=False,
                      params={"app": str(APP), "engine": "deployment", "n-features": -1,
                              "timeout": 240.0}), tmp_path / "run")


def test_the_certificates_chain_to_the_runs_own_authority(tmp_path: Path) -> None:
    from cryptography import x509

    paths = deployment.write_tls(tmp_path / "tls")
    ca = x509.load_pem_x509_certificate(paths["ca"].read_bytes())
    cert = x509.load_pem_x509_certificate(paths["cert"].read_bytes())
    cert.verify_directly_issued_by(ca)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.1" in [str(ip) for ip in names.get_values_for_type(x509.IPAddress)]
    for path in paths.values():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "tls").stat().st_mode) == 0o700


def test_the_app_folder_names_the_recording_wrappers(tmp_path: Path) -> None:
    project = tomllib.loads((APP / "pyproject.toml").read_text())
    folder = deployment.write_app(tmp_path / "app", {"protocol": "flower-app", "params": {}},
                                  {"lr": 0.5, spool.SEED_KEY: 7}, source=APP, project=project)
    written = tomllib.loads((folder / "pyproject.toml").read_text())
    app = written["tool"]["flwr"]["app"]
    assert app["components"] == {"serverapp": "fedsec_recorded:serverapp",
                                 "clientapp": "fedsec_recorded:clientapp"}
    assert app["config"] == {"lr": 0.5, spool.SEED_KEY: 7}
    assert app["publisher"] == "fedsec-tests" and written["project"]["name"] == "numpyfed"
    assert (folder / "numpyfed" / "client_app.py").is_file()
    with pytest.raises(FedsecError, match="64-bit integers"):
        deployment.write_app(tmp_path / "big", {}, {"seed": 2**64})
    seeded = deployment.write_app(tmp_path / "seeded", {}, {spool.SEED_KEY: 2**100})
    config = tomllib.loads((seeded / "pyproject.toml").read_text())["tool"]["flwr"]["app"]
    assert int(config["config"][spool.SEED_KEY]) == 2**100  # a secret seed, as its digits


def test_nodes_are_named_by_the_partition_their_log_gives(tmp_path: Path) -> None:
    (tmp_path / spool.CLIENTS).mkdir()
    for node, partition in ((77, 1), (5, 0)):
        spool.append_line(tmp_path / spool.CLIENTS / f"{node}.jsonl",
                          {"event": "received", "partition_id": partition})
    assert relay.node_partitions(tmp_path, 2) == {5: 0, 77: 1}
    spool.append_line(tmp_path / spool.CLIENTS / "9.jsonl", {"partition_id": 1})
    with pytest.raises(FedsecError, match="both train on partition 1"):
        relay.node_partitions(tmp_path, 2)
