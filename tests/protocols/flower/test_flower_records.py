"""The recorder's pieces on stand-ins for Flower's messages (no Flower needed): rows, digests,
rounds, party names, the truth mod, and the cross-check of the clients' logs."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from fedsec.errors import FedsecError
from fedsec.network import Network
from fedsec.protocols.flower import client, records, spool, tags
from fedsec.protocols.flower.recorder import Recorder
from fedsec.protocols.flower.simulation import collect_truth, cross_check
from fedsec.transcript import TranscriptWriter


class FakeArray:
    def __init__(self, value: np.ndarray) -> None:
        self.value = value

    def numpy(self) -> np.ndarray:
        return self.value


def content(arrays: dict[str, np.ndarray] | None = None, config: dict[str, Any] | None = None,
            metrics: dict[str, Any] | None = None) -> SimpleNamespace:
    return SimpleNamespace(
        array_records={} if arrays is None else {"arrays": {k: FakeArray(v)
                                                            for k, v in arrays.items()}},
        config_records={} if config is None else {"config": config},
        metric_records={} if metrics is None else {"metrics": metrics})


def message(body: SimpleNamespace, *, message_id: str, src: int = 1, dst: int = 0,
            reply_to: str = "", message_type: str = "train") -> SimpleNamespace:
    metadata = SimpleNamespace(message_id=message_id, src_node_id=src, dst_node_id=dst,
                               reply_to_message_id=reply_to, group_id="",
                               message_type=message_type)
    return SimpleNamespace(metadata=metadata, content=body, has_error=lambda: False)


W = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(2, dtype=np.float32)}


def test_a_message_is_a_head_row_and_one_row_per_array() -> None:
    m = message(content(W, config={"server-round": 2, "key": b"\x01"}), message_id="m1", dst=7)
    rows = records.message_rows(m, tags.INSTRUCTION, 7)
    head, *arrays = rows
    assert head.tag == tags.TRAIN_INSTRUCTION and head.payload == b""
    assert head.meta[tags.NODE_ID] == "7" and head.meta[tags.N_ARRAYS] == 2
    assert head.meta[tags.CONFIGS] == {"config": {"server-round": 2, "key": {"hex": "01"}}}
    assert head.meta[tags.ARRAY_RECORDS] == {"arrays": [["w", "<f4", [2, 3]], ["b", "<f4", [2]]]}
    assert [r.tag for r in arrays] == [tags.TRAIN_INSTRUCTION_ARRAYS] * 2
    np.testing.assert_array_equal(arrays[0].payload, W["w"])
    assert arrays[0].payload.dtype == np.float32 and arrays[1].meta[tags.ARRAY] == "b"
    assert records.round_of(m) == 2


def test_the_digest_changes_with_any_value() -> None:
    a = message(content(W, metrics={"n": 1}), message_id="x")
    b = message(content({**W, "b": np.array([1, 2], dtype=np.float32)}, metrics={"n": 1}),
                message_id="y")
    c = message(content(W, metrics={"n": 2}), message_id="z")
    digests = {records.content_digest(m) for m in (a, b, c)}
    assert len(digests) == 3
    assert records.content_digest(a) == records.content_digest(
        message(content(W, metrics={"n": 1}), message_id="other"))


def _recorded(tmp_path) -> tuple[Recorder, Network, Any]:
    network = Network(TranscriptWriter({}), {"server": "server", "client0": "client",
                                            "client1": "client"})
    recorder = Recorder(network, "server", ["client0", "client1"], node_order=lambda: [11, 22])
    where = tmp_path
    for sub in (spool.CLIENTS, spool.TRUTH, spool.DATA):
        (where / sub).mkdir(exist_ok=True)
    config = {spool.SPOOL_KEY: str(where)}
    for node, partition in ((11, 0), (22, 1)):
        instruction = message(content(W, config={"server-round": 1}), message_id=f"i{node}",
                              src=0, dst=node)
        recorder.record(instruction, tags.INSTRUCTION)
        context = SimpleNamespace(node_id=node, node_config={"partition-id": partition},
                                  run_config={})

        def app(message: Any, context: Any, node: int = node) -> Any:
            reply = {k: v + node for k, v in W.items()}
            return SimpleNamespace(
                metadata=SimpleNamespace(message_id="", src_node_id=node, dst_node_id=0,
                                         reply_to_message_id=message.metadata.message_id,
                                         group_id="", message_type="train"),
                content=content(reply, metrics={"num-examples": 3}), has_error=lambda: False)

        def with_mod(message: Any, context: Any, app: Any = app) -> Any:
            return client.record_plaintext(message, context, app)

        reply = client.RecordedClientApp(with_mod, config)(message=instruction, context=context)
        assert context.run_config == {}  # fedsec's entries are gone again
        recorder.record(reply, tags.REPLY)
    return recorder, network, where


def test_recorded_rows_name_the_parties_and_the_round(tmp_path) -> None:
    _, network, _ = _recorded(tmp_path)
    transcript = network.close()
    assert transcript.verify().ok
    heads = [m for m in transcript.messages if tags.N_ARRAYS in m.meta]
    assert [(m.sender, m.receiver, m.round) for m in heads] == [
        ("server", "client0", 1), ("client0", "server", 1),
        ("server", "client1", 1), ("client1", "server", 1)]
    assert heads[1].meta[tags.PARTITION_ID] == 0 and heads[3].meta[tags.NODE_ID] == "22"


def test_the_cross_check_passes_and_the_truth_is_the_update(tmp_path) -> None:
    recorder, _, where = _recorded(tmp_path)
    summary = cross_check(where, recorder)
    assert summary["digests_matched"] == 4 and summary["client_logs"] == 2
    truth = collect_truth(where, recorder)
    np.testing.assert_array_equal(truth["client1"][tags.update_key(1)], np.full(8, 22.0))
    assert truth["client0"][tags.model_key(1)].size == 8


def test_the_cross_check_finds_a_reply_changed_on_the_way(tmp_path) -> None:
    recorder, _, where = _recorded(tmp_path)
    node, _ = recorder.replies["i22"]
    recorder.replies["i22"] = (node, "0" * 64)  # the server recorded other content
    with pytest.raises(FedsecError, match="disagree on reply messages"):
        cross_check(where, recorder)


def test_a_node_outside_the_run_is_refused() -> None:
    network = Network(TranscriptWriter({}), {"server": "server", "client0": "client"})
    recorder = Recorder(network, "server", ["client0"], node_order=lambda: [5])
    assert recorder.name(5) == "client0"
    with pytest.raises(FedsecError, match="not one of the run's 1 clients"):
        recorder.name(6)
