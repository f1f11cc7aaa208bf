"""A real Flower app (``flower-fedavg``: 2 clients, 1 round) in Flower's simulation engine,
recorded by fedsec: the transcript is intact, holds exactly the messages the app's strategy
counted, gives Flower's FedAvg aggregate back, and lets the server read every update."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("flwr.simulation")
pytest.importorskip("torch")

from fedsec.attacks.flower.update_readout import FlowerUpdateReadout
from fedsec.cli.main import main
from fedsec.private_store import load_private, truth_key
from fedsec.protocols.flower import tags
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run
from fedsec.testing import check_convergence_record
from fedsec.transcript import check_file, read_transcript
from fedsec.views import build_view

RAY_PROCESS_NAMES = ("raylet", "gcs_server", "default_worker.py", "ray::", "ray/dashboard",
                     "log_monitor.py", "monitor.py")


def _ray_processes() -> set[int]:
    """Pids of the machine's Ray processes (named by their command line)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
        except OSError:
            continue
        if any(name in cmdline for name in RAY_PROCESS_NAMES):
            found.add(int(entry.name))
    return found


@pytest.fixture(scope="module")
def flower_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, Path, set[int]]:
    out = tmp_path_factory.mktemp("flower") / "run"
    before = _ray_processes()
    result = run(RunConfig(protocol="flower-fedavg", seed=3, secret_seed=3, reference=False), out)
    return result, out, before


def test_each_clients_log_is_kept_beside_the_transcript(flower_run) -> None:
    _, out, _ = flower_run
    logs = sorted((out / "parties" / "flower").glob("*.jsonl"))
    assert len(logs) == 2 and all(log.read_text().count('"event": "sent"') for log in logs)


def test_the_run_leaves_no_ray_process_behind(flower_run) -> None:
    _, _, before = flower_run
    # ray.shutdown() signals its processes and returns: give them a moment to exit
    deadline = time.monotonic() + 20.0
    while not _ray_processes() <= before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ray_processes() <= before


def test_the_transcript_is_intact_and_inspect_reads_it(flower_run, capsys) -> None:
    _, out, _ = flower_run
    path = out / "transcript.arrow"
    assert check_file(path).status == "intact"
    assert main(["inspect", str(path)]) == 0
    assert "intact" in capsys.readouterr().out


def test_one_head_row_per_message_the_app_counted(flower_run) -> None:
    result, out, _ = flower_run
    transcript = read_transcript(out / "transcript.arrow")
    heads = [m for m in transcript.messages if tags.N_ARRAYS in m.meta]
    metrics = result.record.federated_metrics
    # counted inside the app by its own strategy, and by each client's own log
    assert len(heads) == metrics["app_instructions"] + metrics["app_replies"] == 8
    assert metrics["digests_matched"] == 8
    arrays = [m for m in transcript.messages if tags.N_ARRAYS not in m.meta]
    assert len(arrays) == sum(m.meta[tags.N_ARRAYS] for m in heads)
    assert {m.tag for m in heads} == {tags.TRAIN_INSTRUCTION, tags.TRAIN_REPLY,
                                      tags.EVALUATE_INSTRUCTION, tags.EVALUATE_REPLY}
    assert {m.receiver for m in heads if m.sender == "server"} == {"client0", "client1"}
    assert all(m.round == 1 for m in transcript.messages)
    node_ids = {m.meta[tags.NODE_ID] for m in heads}
    assert len(node_ids) == 2 and all(n.isdigit() for n in node_ids)


def test_fedavg_from_the_transcript_equals_flowers(flower_run) -> None:
    result, out, _ = flower_run
    view = build_view(read_transcript(out / "transcript.arrow"), "server")
    replies = [m for m in view.messages if m.tag == tags.TRAIN_REPLY]
    weights = [float(m.meta[tags.METRICS]["metrics"]["num-examples"]) for m in replies]
    factors = [w / sum(weights) for w in weights]  # Flower's own arithmetic, in its order
    total: dict[str, np.ndarray] = {}
    for reply, factor in zip(replies, factors, strict=True):
        for row in view.messages:
            if row.tag == tags.TRAIN_REPLY_ARRAYS and \
                    row.meta[tags.MESSAGE_ID] == reply.meta[tags.MESSAGE_ID]:
                name = row.meta[tags.ARRAY]
                total[name] = (row.payload * factor if name not in total
                               else total[name] + row.payload * factor)
    ours = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in total.values()])
    flowers = result.private[truth_key(None, "flower", "aggregate", "round1")]
    np.testing.assert_array_equal(ours, flowers)


def test_the_server_reads_every_update_exactly(flower_run) -> None:
    _, out, _ = flower_run
    private = load_private(out / "private.npz")
    view = build_view(read_transcript(out / "transcript.arrow"), "server", private)
    reconstruction = create("attack", "flower-update-readout").run(view)
    again = create("attack", "flower-update-readout").run(view)
    assert reconstruction.estimates.keys() == again.estimates.keys()
    assert all(np.array_equal(v, again.estimates[k]) for k, v in reconstruction.estimates.items())
    check_convergence_record(FlowerUpdateReadout, reconstruction.info)
    scores = create("scorer", "reconstruction-error").score(reconstruction, private)
    assert scores["n_targets"] == 2
    assert scores["relative_error"] == 0.0 and scores["baseline_relative_error"] > 0.05
    for client in ("client0", "client1"):
        key = truth_key(client, "value", "update", "round1")
        np.testing.assert_array_equal(reconstruction.estimates[key], private[key])
        assert np.linalg.norm(private[key]) > 0


def test_a_client_alone_sees_no_other_clients_update(flower_run) -> None:
    _, out, _ = flower_run
    private = load_private(out / "private.npz")
    view = build_view(read_transcript(out / "transcript.arrow"), "client0", private)
    assert {m.sender for m in view.messages} <= {"server", "client0"}
    assert create("attack", "flower-update-readout").not_applicable(view) is None
    reconstruction = create("attack", "flower-update-readout").run(view)
    assert reconstruction.estimates == {}  # its own reply is no target


def test_the_private_store_holds_each_clients_rows(flower_run) -> None:
    _, out, _ = flower_run
    private = load_private(out / "private.npz")
    for client in ("client0", "client1"):
        rows = private[truth_key(client, "value", "training", "X")]
        shard = private[truth_key(client, "shard", "cell0", "X")]
        np.testing.assert_array_equal(rows, shard)


def test_without_flower_the_run_says_what_to_install(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setitem(os.environ, "FEDSEC_THREADS", "1")
    import sys

    monkeypatch.setitem(sys.modules, "flwr", None)
    monkeypatch.setitem(sys.modules, "flwr.simulation", None)
    code = main(["run", "flower-fedavg", "--out", str(tmp_path / "run"), "--json"])
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert len(err.splitlines()) == 1 and 'pip install "fedsec[flower]"' in err


def test_the_secagg_coalition_attack_does_not_apply_without_secagg(flower_run) -> None:
    _, out, _ = flower_run
    view = build_view(read_transcript(out / "transcript.arrow"), "server,client1",
                      load_private(out / "private.npz"))
    reason = create("attack", "flower-secagg-coalition").not_applicable(view)
    assert reason is not None and "did not use Flower's SecAgg+" in reason
