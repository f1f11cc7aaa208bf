"""The recorder across processes: what the deployment engine's ServerApp process records,
relayed through the spool into fedsec's transcript.

In Flower's deployment engine the ServerApp and each ClientApp run in processes of their own
(started by Flower's SuperExec), so the recorder cannot write the transcript directly. The
same recorder still sits in the message path: the FAB fedsec ships
(:mod:`.deployment`) names :func:`server_app` and :func:`client_app` as its components, which
wrap the run's own apps in the recording Grid (:func:`.recorder.recording_grid`) and in
:class:`.client.RecordedClientApp`. The Grid's :class:`~.recorder.Recorder` writes to a
:class:`SpoolNetwork` instead of fedsec's :class:`~fedsec.network.Network`: one file per
message (``server/rows/<n>.npz``: its rows, arrays and metadata, in the order the ServerApp
sent and received them). When the ServerApp ends (failing too) it leaves the recorder's
digests (``server/recorder.json``) and its ``context.state`` (``server/state.pb``, Flower's
own protobuf of the RecordDict) there.

Back in fedsec, :func:`replay` writes those rows through ``federation.network`` in the same
order, so the transcript is an ordinary fedsec transcript. The ServerApp process cannot tell
which party a Flower node is (a SuperNode's partition is in its own node config), so it
records each client as ``node<id>``; :func:`replay` names the nodes from the clients' own logs
(each log line carries the node's ``partition-id``) and adds the partition to each head row,
as the simulation engine's recorder does. Nothing here is pickled.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, cast

import numpy as np

from fedsec.errors import FedsecError
from fedsec.network import Network
from fedsec.protocols.flower import spool, tags
from fedsec.protocols.flower.client import RecordedClientApp
from fedsec.protocols.flower.recorder import Recorder, recording_grid

SERVER = "server"
"""The spool folder the ServerApp process writes (and the ServerApp's party name)."""
ROWS, RECORDER_FILE, STATE_FILE, DONE_FILE = "rows", "recorder.json", "state.pb", "done.json"
NODE_PREFIX = "node"
"""How the ServerApp process names a client it cannot name yet: ``node<id>``."""


class SpoolNetwork:
    """What :class:`~.recorder.Recorder` uses of a Network (``stage`` and ``send``), writing
    each message (one ``stage`` block: its head row and its array rows) to the spool."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.n_messages = 0
        self._rows: list[dict[str, Any]] | None = None
        self._arrays: dict[str, np.ndarray] = {}

    @contextmanager
    def stage(self, phase: str, round: int | None = None) -> Iterator[None]:
        self._rows, self._arrays = [], {}
        try:
            yield
        finally:
            rows, self._rows = self._rows, None
            spool.save_arrays(self.folder / f"{self.n_messages:09d}.npz", self._arrays,
                              {"phase": phase, "round": round, "rows": rows})
            self.n_messages += 1

    def send(self, sender: str, receiver: str, tag: str, payload: Any, *,
             meta: Mapping[str, Any] | None = None, size: int | None = None,
             **_options: Any) -> Any:
        if self._rows is None:
            raise FedsecError("The relayed recorder sent a row outside a message's stage.")
        array = None
        if isinstance(payload, np.ndarray):
            array = f"a{len(self._arrays)}"
            self._arrays[array] = payload
        self._rows.append({"sender": sender, "receiver": receiver, "tag": tag,
                           "meta": dict(meta or {}), "size": size, "array": array})
        return payload


class _NodeRecorder(Recorder):
    """The recorder of the ServerApp process: clients named by node id until :func:`replay`."""

    def name(self, node_id: int) -> str:
        return f"{NODE_PREFIX}{int(node_id)}"


def run_relayed(server_app: Any, grid: Any, context: Any) -> None:
    """Run ``server_app`` on a recording Grid whose rows go to the spool the run config
    names; leave the recorder's digests and the context's state there, whatever happens."""
    where = spool.spool_of(context.run_config)
    if where is None:  # run without fedsec: nothing to record
        server_app(grid=grid, context=context)
        return
    folder = where / SERVER
    network = SpoolNetwork(folder / ROWS)
    recorder = _NodeRecorder(cast(Network, network), SERVER, ())
    status: dict[str, Any] = {"status": "completed"}
    try:
        server_app(grid=recording_grid(grid, recorder), context=context)
    except BaseException as error:
        status = {"status": "failed", "error": f"{type(error).__name__}: {error}",
                  "traceback": traceback.format_exc()}
        raise
    finally:
        from flwr.common.serde import recorddict_to_proto

        (folder / STATE_FILE).write_bytes(
            recorddict_to_proto(context.state).SerializeToString())
        (folder / RECORDER_FILE).write_text(json.dumps(
            {"instructions": recorder.instructions, "replies": recorder.replies,
             "messages": network.n_messages}))
        (folder / DONE_FILE).write_text(json.dumps(status))


def server_app(build: Callable[[], Any]) -> Any:
    """A ServerApp running ``build()``'s ServerApp under the relayed recorder."""
    from flwr.serverapp import ServerApp

    app = ServerApp()

    @app.main()
    def main(grid: Any, context: Any) -> None:
        run_relayed(build(), grid, context)

    return app


def client_app(build: Callable[[], Any]) -> Any:
    """A ClientApp running ``build()``'s ClientApp inside :class:`.client.RecordedClientApp`
    (built on the first message; the run config is the context's)."""
    return _client_class()(build)


@cache
def _client_class() -> type:
    from flwr.clientapp import ClientApp

    class RelayedClientApp(ClientApp):
        """A ClientApp (what Flower's loader accepts) around a recorded one."""

        def __init__(self, build: Callable[[], Any]) -> None:
            super().__init__()
            self._build = build
            self._inner: Any = None

        def __call__(self, message: Any, context: Any) -> Any:
            if self._inner is None:
                self._inner = self._build()
            return RecordedClientApp(self._inner, dict(context.run_config))(message, context)

    return RelayedClientApp


def node_partitions(where: Path, n_clients: int) -> dict[int, int]:
    """Each client node's partition id, from its own log (FedsecError if a log names none,
    several, or one out of range, or two nodes share one)."""
    out: dict[int, int] = {}
    for log in sorted((where / spool.CLIENTS).glob("*.jsonl")):
        node = int(log.stem)
        seen = {entry.get("partition_id") for entry in spool.read_lines(log)}
        if len(seen) != 1 or not all(isinstance(p, int) and 0 <= p < n_clients for p in seen):
            raise FedsecError(
                f"Flower node {node} logged the partition ids {sorted(map(str, seen))}; each "
                f"SuperNode needs one 'partition-id' below {n_clients} in its node config.")
        out[node] = cast(int, seen.pop())
    taken: dict[int, int] = {}
    for node, partition in out.items():
        if partition in taken:
            raise FedsecError(f"Flower nodes {taken[partition]} and {node} both train on "
                              f"partition {partition}; each SuperNode needs its own.")
        taken[partition] = node
    return out


def replay(where: Path, network: Network, clients: Sequence[str],
           run_config: Mapping[str, Any]) -> tuple[Recorder, Any]:
    """Write what the ServerApp process recorded through ``network``, in its order; the
    recorder (nodes named, digests filled, for :func:`.simulation.cross_check`) and a Flower
    ``Context`` holding the ServerApp's final state and ``run_config`` (the run's)."""
    from flwr.app import Context
    from flwr.common.serde import recorddict_from_proto
    from flwr.proto.recorddict_pb2 import RecordDict as ProtoRecordDict

    folder = where / SERVER
    if not (folder / DONE_FILE).is_file():
        raise FedsecError("The ServerApp process left no record in the spool: it did not run "
                          "(see the SuperLink's and the ServerApp's logs).")
    recorder = Recorder(network, SERVER, clients)
    for node, partition in node_partitions(where, len(clients)).items():
        recorder.names[node] = clients[partition]
        recorder.partitions[node] = partition
    for path in sorted((folder / ROWS).glob("*.npz")):
        arrays, message = spool.load_arrays(path)
        _replay_message(network, recorder, arrays, message)
    dump = json.loads((folder / RECORDER_FILE).read_text())
    recorder.instructions = {k: (int(n), str(d)) for k, (n, d) in dump["instructions"].items()}
    recorder.replies = {k: (int(n), str(d)) for k, (n, d) in dump["replies"].items()}
    proto = ProtoRecordDict()
    proto.ParseFromString((folder / STATE_FILE).read_bytes())
    context = Context(run_id=0, node_id=0, node_config={}, state=recorddict_from_proto(proto),
                      run_config=dict(run_config))
    return recorder, context


def _replay_message(network: Network, recorder: Recorder, arrays: Mapping[str, np.ndarray],
                    message: Mapping[str, Any]) -> None:
    rows = message["rows"]
    node = int(rows[0]["meta"][tags.NODE_ID])
    if node not in recorder.names:
        raise FedsecError(
            f"The ServerApp exchanged messages with Flower node {node}, which left no log: it "
            "is not one of fedsec's SuperNodes, or its ClientApp failed before logging.")
    party = recorder.names[node]
    with network.stage(message["phase"], round=message["round"]):
        for index, row in enumerate(rows):
            meta = dict(row["meta"])
            if index == 0:
                meta[tags.PARTITION_ID] = recorder.partitions[node]
            sender = SERVER if row["sender"] == SERVER else party
            receiver = SERVER if row["receiver"] == SERVER else party
            payload = b"" if row["array"] is None else arrays[row["array"]]
            network.send(sender, receiver, row["tag"], payload, meta=meta, size=row["size"])
