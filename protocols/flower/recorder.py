"""The ServerApp side of the recorder: a Grid that writes every message to the transcript.

Flower's ServerApp talks to the clients only through its Grid (``push_messages``,
``pull_messages``, ``send_and_receive``). :func:`recording_grid` wraps the Grid a ServerApp
is given so that each instruction it pushes and each reply it pulls is recorded through
fedsec's :class:`~fedsec.network.Network` as the rows of :mod:`.records`, between ``server``
and the client's party name, in the order the ServerApp sent and received them. Strategies
and custom ``main`` functions run unchanged on it. :class:`RecordingServerApp` is the
wrapper fedsec puts around a ServerApp it runs, so an app needs no line of its own for it.

Flower is imported only when a grid is wrapped (the Grid base class).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from fedsec.errors import FedsecError
from fedsec.network import Network
from fedsec.protocols.flower import records, tags


class Recorder:
    """Records Flower messages as transcript rows and keeps what the cross-check needs.

    Parameters
    ----------
    network : Network
        fedsec's network of the run (its writer is the transcript).
    server : str
        The ServerApp's party name.
    clients : Sequence[str]
        The clients' party names, by partition id.
    node_order : Callable, optional
        The run's node ids in partition order (the simulation engine registers node ``i``
        for partition ``i``); read again whenever a message names a node not yet seen.
    """

    def __init__(self, network: Network, server: str, clients: Sequence[str],
                 node_order: Callable[[], Sequence[int]] | None = None) -> None:
        self.network = network
        self.server = server
        self.clients = tuple(clients)
        self.node_order = node_order
        self.names: dict[int, str] = {}
        self.partitions: dict[int, int] = {}
        #: instruction id -> (node id, digest); reply-to id -> (node id, digest)
        self.instructions: dict[str, tuple[int, str]] = {}
        self.replies: dict[str, tuple[int, str]] = {}
        self.rounds: dict[str, int] = {}  # instruction id -> its round
        self.stages: dict[str, str] = {}  # instruction id -> its SecAgg+ stage

    def name(self, node_id: int) -> str:
        """The party name of a Flower node."""
        if node_id not in self.names and self.node_order is not None:
            for partition, node in enumerate(self.node_order()):
                if partition < len(self.clients):
                    self.names.setdefault(int(node), self.clients[partition])
                    self.partitions.setdefault(int(node), partition)
        try:
            return self.names[node_id]
        except KeyError:
            raise FedsecError(
                f"Flower node {node_id} is not one of the run's {len(self.clients)} clients "
                f"({', '.join(self.clients)}); the recorder names clients from the engine's "
                "node registration order.") from None

    def record(self, message: Any, direction: str) -> None:
        """Write ``message`` (an instruction pushed or a reply pulled) to the transcript."""
        metadata = message.metadata
        node_id = int(metadata.dst_node_id if direction == tags.INSTRUCTION
                      else metadata.src_node_id)
        party = self.name(node_id)
        sender, receiver = ((self.server, party) if direction == tags.INSTRUCTION
                            else (party, self.server))
        extra: dict[str, Any] = ({tags.PARTITION_ID: self.partitions[node_id]}
                                 if node_id in self.partitions else {})
        if direction == tags.INSTRUCTION:
            server_round = records.round_of(message)
            self.rounds[str(metadata.message_id)] = server_round
            stage = records.secagg_stage_of(message)
            if stage is not None:
                self.stages[str(metadata.message_id)] = stage
        else:  # a reply belongs to its instruction's round and stage
            server_round = self.rounds.get(str(metadata.reply_to_message_id), 0)
            stage = self.stages.get(str(metadata.reply_to_message_id))
        if stage is not None:
            extra[tags.SECAGG_STAGE] = stage
        rows = records.message_rows(message, direction, node_id, extra)
        net = self.network
        phase = records.phase_of(str(metadata.message_type))
        with net.stage(phase if stage is None else f"{phase}.{stage}", round=server_round):
            for row in rows:
                net.send(sender, receiver, row.tag, row.payload, meta=row.meta, size=row.size)
        digest = records.content_digest(message)
        if direction == tags.INSTRUCTION:
            self.instructions[str(metadata.message_id)] = (node_id, digest)
        else:
            self.replies[str(metadata.reply_to_message_id)] = (node_id, digest)


def recording_grid(grid: Any, recorder: Recorder) -> Any:
    """``grid`` with every message it pushes and pulls recorded by ``recorder``."""
    if isinstance(grid, _grid_class()):
        return grid
    return _grid_class()(grid, recorder)


@cache
def wrapping_grid_class() -> type:
    """A Flower Grid around another (``self.inner``) that passes the run, message creation and
    the nodes through; a subclass changes what it pushes, pulls or exchanges. Built on first
    use (Flower imported then, never at fedsec's import)."""
    from flwr.serverapp import Grid

    class WrappingGrid(Grid):
        """A Grid around ``inner``, passing everything but the exchanges through."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def set_run(self, run: Any) -> None:
            self.inner.set_run(run)

        @property
        def run(self) -> Any:
            return self.inner.run

        def create_message(self, *args: Any, **kwargs: Any) -> Any:
            return self.inner.create_message(*args, **kwargs)

        def get_node_ids(self) -> Iterable[int]:
            return self.inner.get_node_ids()

        def get_nodes(self) -> Iterable[Any]:
            return self.inner.get_nodes()

    return WrappingGrid


@cache
def _grid_class() -> type:
    """The recording Grid: a :func:`wrapping_grid_class` Grid, built on first use."""

    class RecordingGrid(wrapping_grid_class()):  # type: ignore[misc]
        """A Grid that records every instruction it pushes and every reply it pulls."""

        def __init__(self, inner: Any, recorder: Recorder, pull_interval: float = 0.05) -> None:
            super().__init__(inner)
            self.recorder = recorder
            self.pull_interval = pull_interval

        def push_messages(self, messages: Iterable[Any]) -> Iterable[str]:
            messages = list(messages)
            ids = list(self.inner.push_messages(messages))
            for message in messages:  # the engine gave each its id while pushing it
                if message.metadata.message_id:
                    self.recorder.record(message, tags.INSTRUCTION)
            return ids

        def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Any]:
            replies = list(self.inner.pull_messages(message_ids))
            for reply in replies:
                self.recorder.record(reply, tags.REPLY)
            return replies

        def send_and_receive(self, messages: Iterable[Any], *,
                             timeout: float | None = None) -> Iterable[Any]:
            # Flower's own loop, through this grid's push and pull so both are recorded
            pending = set(self.push_messages(messages))
            end = time.time() + (timeout if timeout is not None else 0.0)
            out: list[Any] = []
            while timeout is None or time.time() < end:
                got = list(self.pull_messages(pending))
                out.extend(got)
                pending.difference_update(m.metadata.reply_to_message_id for m in got)
                if not pending:
                    break
                time.sleep(self.pull_interval)
            return out

    return RecordingGrid


class RecordingServerApp:
    """A ServerApp run on a recording Grid, with fedsec's run config in its context.

    After the run, :attr:`context` is the ServerApp's context (its ``state`` holds what the
    app chose to keep, such as the final model).
    """

    def __init__(self, server_app: Any, recorder: Recorder,
                 run_config: Mapping[str, Any]) -> None:
        self.server_app = server_app
        self.recorder = recorder
        self.run_config = dict(run_config)
        self.context: Any = None

    def __call__(self, grid: Any, context: Any) -> None:
        context.run_config.update(self.run_config)
        self.context = context
        if self.recorder.node_order is None:
            self.recorder.node_order = simulation_node_order(grid)
        self.server_app(grid=recording_grid(grid, self.recorder), context=context)


def simulation_node_order(grid: Any) -> Callable[[], list[int]]:
    """The node ids of Flower's simulation engine in registration order, which is partition
    order (its in-memory link state keeps nodes in a dict as they register)."""
    state = getattr(grid, "state", None)
    if state is None or not hasattr(state, "get_node_info"):
        raise FedsecError("The recorder names simulated clients from the simulation engine's "
                          "link state, which this Grid does not have.")
    return lambda: [int(info.node_id) for info in state.get_node_info()]
