"""The shipped Flower app: FedAvg of a small perceptron (:mod:`.model`) on fedsec's shards.

A real Flower 1.42 app written the way Flower's own quick-start is (a ``ServerApp`` whose
``main`` runs Flower's ``FedAvg`` strategy, a ``ClientApp`` with ``train`` and ``evaluate``
functions, the settings in the run config); the one line it adds for fedsec is
:func:`~.client.record_plaintext` in the ClientApp's mods (and :func:`~.client.expose_data`
in ``train``). Each client trains on the shard fedsec hands it (``shards/<partition>.npz``
in the spool), so the run's private store holds every client's rows.

The strategy counts, on its own, every message it configures and every reply it
aggregates, and keeps each round's aggregate in the ServerApp's ``context.state``
(:data:`COUNTS`, :func:`aggregate_key`): what the recorder's transcript is checked against.
Flower is imported when the apps are built (:func:`server_app`, :func:`client_app`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import numpy as np

from fedsec.errors import FedsecError
from fedsec.nn import torch_seed
from fedsec.protocols.flower import spool
from fedsec.protocols.flower.client import PARTITION_ID, expose_data, record_plaintext
from fedsec.protocols.flower.model import (
    Architecture,
    evaluate,
    initial_weights,
    train_locally,
)
from fedsec.seeding import generator

# -- run-config keys (Flower's kebab-case) ----------------------------------------------------
ROUNDS = "num-server-rounds"
CLIENTS = "num-clients"
LOCAL_EPOCHS = "local-epochs"
BATCH_SIZE = "batch-size"
LR = "lr"
HIDDEN = "hidden"
TIMEOUT = "round-timeout"
N_INPUTS = "n-inputs"
N_CLASSES = "n-classes"

# -- what the ServerApp keeps in context.state ------------------------------------------------
FINAL = "fedsec-final-arrays"
"""The global model after the last round (an ArrayRecord)."""
COUNTS = "fedsec-app-counts"
"""A MetricRecord: ``instructions`` the strategy sent and ``replies`` it received."""


def aggregate_key(server_round: int) -> str:
    """The ``context.state`` key of the FedAvg aggregate of ``server_round``."""
    return f"fedsec-aggregate-round{int(server_round)}"


def client_shard(run_config: Any, partition: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows and labels fedsec handed the client of ``partition`` (in the spool)."""
    where = spool.spool_of(run_config)
    path = None if where is None else where / spool.SHARDS / f"{partition}.npz"
    if path is None or not path.is_file():
        raise FedsecError("The shipped Flower FedAvg app trains on the shards fedsec hands its "
                          "clients: run it with 'fedsec run flower-fedavg'.")
    arrays, _ = spool.load_arrays(path)
    return arrays["X"], arrays["y"]


def architecture(run_config: Any) -> Architecture:
    """The perceptron the run config describes."""
    return Architecture(n_inputs=int(run_config[N_INPUTS]), n_hidden=int(run_config[HIDDEN]),
                        n_classes=int(run_config[N_CLASSES]))


def _weights_of(record: Any) -> dict[str, np.ndarray]:
    return {name: array.numpy() for name, array in record.items()}


def array_record(weights: dict[str, np.ndarray]) -> Any:
    """Named weights as a Flower ArrayRecord."""
    from flwr.app import Array, ArrayRecord

    return ArrayRecord({name: Array(np.ascontiguousarray(v)) for name, v in weights.items()})


def _train(message: Any, context: Any) -> Any:
    from flwr.app import Message, MetricRecord, RecordDict

    config = context.run_config
    partition = int(context.node_config[PARTITION_ID])
    X, y = client_shard(config, partition)
    expose_data(context, X, y)
    instruction = message.content["config"]
    server_round = int(instruction["server-round"])
    seed = torch_seed(generator(int(config[spool.SEED_KEY]),
                                f"flower/train/partition{partition}/round{server_round}"))
    weights, loss = train_locally(
        architecture(config), _weights_of(message.content["arrays"]), X, y,
        epochs=int(instruction[LOCAL_EPOCHS]), batch_size=int(instruction[BATCH_SIZE]),
        lr=float(instruction[LR]), seed=seed)
    content = RecordDict({"arrays": array_record(weights),
                          "metrics": MetricRecord({"train-loss": loss,
                                                   "num-examples": len(y)})})
    return Message(content, reply_to=message)


def _evaluate(message: Any, context: Any) -> Any:
    from flwr.app import Message, MetricRecord, RecordDict

    config = context.run_config
    X, y = client_shard(config, int(context.node_config[PARTITION_ID]))
    loss, accuracy = evaluate(architecture(config),
                              _weights_of(message.content["arrays"]), X, y)
    content = RecordDict({"metrics": MetricRecord({"eval-loss": loss, "eval-acc": accuracy,
                                                   "num-examples": len(y)})})
    return Message(content, reply_to=message)


def client_app(*, record: bool = True) -> Any:
    """The ClientApp; ``record`` places :func:`~.client.record_plaintext` (the fedsec line)."""
    from flwr.clientapp import ClientApp

    app = ClientApp(mods=[record_plaintext] if record else [])
    app.train()(_train)
    app.evaluate()(_evaluate)
    return app


@cache
def _counting_fedavg() -> type:
    """Flower's FedAvg, counting what it sends and receives and keeping each aggregate."""
    from flwr.serverapp.strategy import FedAvg

    class CountingFedAvg(FedAvg):
        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            self.instructions = 0
            self.replies = 0
            self.aggregates: dict[int, Any] = {}

        def configure_train(self, server_round: int, arrays: Any, config: Any,
                            grid: Any) -> Iterable[Any]:
            messages = list(super().configure_train(server_round, arrays, config, grid))
            self.instructions += len(messages)
            return messages

        def configure_evaluate(self, server_round: int, arrays: Any, config: Any,
                               grid: Any) -> Iterable[Any]:
            messages = list(super().configure_evaluate(server_round, arrays, config, grid))
            self.instructions += len(messages)
            return messages

        def aggregate_train(self, server_round: int, replies: Iterable[Any]) -> Any:
            replies = list(replies)
            self.replies += len(replies)
            arrays, metrics = super().aggregate_train(server_round, replies)
            if arrays is not None:
                self.aggregates[server_round] = arrays
            return arrays, metrics

        def aggregate_evaluate(self, server_round: int, replies: Iterable[Any]) -> Any:
            replies = list(replies)
            self.replies += len(replies)
            return super().aggregate_evaluate(server_round, replies)

    return CountingFedAvg


def _main(grid: Any, context: Any) -> None:
    from flwr.app import ConfigRecord, MetricRecord

    config = context.run_config
    n_clients = int(config[CLIENTS])
    seed = torch_seed(generator(int(config[spool.SEED_KEY]), "flower/initial-model"))
    initial = initial_weights(architecture(config), seed)
    strategy = _counting_fedavg()(fraction_train=1.0, fraction_evaluate=1.0,
                                  min_train_nodes=n_clients, min_evaluate_nodes=n_clients,
                                  min_available_nodes=n_clients)
    result = strategy.start(
        grid=grid, initial_arrays=array_record(initial), num_rounds=int(config[ROUNDS]),
        timeout=float(config[TIMEOUT]),
        train_config=ConfigRecord({LR: float(config[LR]),
                                   LOCAL_EPOCHS: int(config[LOCAL_EPOCHS]),
                                   BATCH_SIZE: int(config[BATCH_SIZE])}))
    context.state[FINAL] = result.arrays
    context.state[COUNTS] = MetricRecord({"instructions": strategy.instructions,
                                          "replies": strategy.replies})
    for server_round, arrays in strategy.aggregates.items():
        context.state[aggregate_key(server_round)] = arrays


def server_app() -> Any:
    """The ServerApp (its ``main`` runs :func:`_main`)."""
    from flwr.serverapp import ServerApp

    app = ServerApp()
    app.main()(_main)
    return app
