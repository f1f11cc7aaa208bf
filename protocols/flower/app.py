"""The shipped Flower app: FedAvg of a small perceptron (:mod:`.model`) on fedsec's shards.

A real Flower 1.42 app written the way Flower's own quick-start is (a ``ServerApp`` whose
``main`` runs Flower's ``FedAvg`` strategy, a ``ClientApp`` with ``train`` and ``evaluate``
functions, the settings in the run config); the one line it adds for fedsec is
:func:`~.client.record_plaintext` in the ClientApp's mods (and :func:`~.client.expose_data`
in ``train``). Each client trains on the shard fedsec hands it (``shards/<partition>.npz``
in the spool), so the run's private store holds every client's rows. A batch size of 0 is
the client's whole shard: with one local epoch each client takes a single full-batch SGD step
and its update is ``-lr`` times its gradient (FedSGD, McMahan et al.'s baseline).

Flower's differential privacy with fixed clipping (Geyer, Klein, Nabi, "Differentially Private
Federated Learning: A Client Level Perspective", 2017; McMahan, Ramage, Talwar, Zhang,
"Learning Differentially Private Recurrent Language Models", ICLR 2018), in either of Flower's
placements (:data:`DP`):

- ``client``: ``fixedclipping_mod`` on the ClientApp's ``train`` clips each update to
  ``clipping_norm`` before it is sent, and Flower's
  ``DifferentialPrivacyClientSideFixedClipping`` wrapper sends the norm and adds the noise to
  the aggregate. :func:`~.client.record_plaintext` sits inside the clipping mod (nearer the
  app), so the truth is the update before clipping; what crosses is the clipped update;
- ``server``: Flower's ``DifferentialPrivacyServerSideFixedClipping`` clips the updates it
  received and noises their aggregate. What crosses is the plaintext update: the server's
  own clipping and noise protect only what it releases (the next global model).

Either way the Gaussian noise (standard deviation ``noise_multiplier x clipping_norm /
sampled clients``) is added by the server to the aggregate, drawn by Flower from NumPy's
global generator (not seeded by fedsec: a DP run's global models are not reproducible).

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
from fedsec.protocols.flower.client import (
    PARTITION_ID,
    client_seed,
    expose_data,
    record_plaintext,
)
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
DP = "dp"
"""Where Flower's fixed-clipping DP runs: one of :data:`DP_PLACEMENTS`."""
CLIPPING_NORM = "dp-clipping-norm"
NOISE_MULTIPLIER = "dp-noise-multiplier"
DP_PLACEMENTS = ("none", "client", "server")

# -- what the ServerApp keeps in context.state ------------------------------------------------
FINAL = "fedsec-final-arrays"
"""The global model after the last round (an ArrayRecord)."""
COUNTS = "fedsec-app-counts"
"""A MetricRecord: ``instructions`` the strategy sent and ``replies`` it received."""
DP_USED = "fedsec-dp"
"""A MetricRecord of the DP wrapper's own settings after the run (``clipping-norm``,
``noise-multiplier``, ``sampled-clients``, ``releases``: noised aggregates); absent without DP."""


def aggregate_key(server_round: int) -> str:
    """The ``context.state`` key of the FedAvg aggregate of ``server_round`` (under DP: of the
    updates as clipped, before Flower's noise)."""
    return f"fedsec-aggregate-round{int(server_round)}"


def own_seed(context: Any) -> int:
    """The client's own seed (:func:`~.client.client_seed`); the shipped app runs only
    under fedsec, which hands every client one."""
    seed = client_seed(context)
    if seed is None:
        raise FedsecError("The shipped Flower FedAvg app seeds each client from the seed fedsec "
                          "hands it: run it with 'fedsec run flower-fedavg'.")
    return seed


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
    seed = torch_seed(generator(own_seed(context), f"flower/train/round{server_round}"))
    weights, loss = train_locally(
        architecture(config), _weights_of(message.content["arrays"]), X, y,
        epochs=int(instruction[LOCAL_EPOCHS]),
        batch_size=batch_of(int(instruction[BATCH_SIZE]), len(y)),
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


def batch_of(batch_size: int, rows: int) -> int:
    """The batch a client trains with: ``batch_size``, or all its ``rows`` for 0 (FedSGD).

    >>> batch_of(32, 100), batch_of(0, 100)
    (32, 100)
    """
    return batch_size if batch_size > 0 else max(rows, 1)


def client_app(*, record: bool = True, dp: str = "none") -> Any:
    """The ClientApp; ``record`` places :func:`~.client.record_plaintext` (the fedsec line).

    With ``dp="client"`` the ``train`` function's mods are, outermost first, Flower's
    ``fixedclipping_mod`` and ``record_plaintext`` (which so records the update before it is
    clipped); ``evaluate`` messages carry no clipping norm and go through no mod.
    """
    from flwr.clientapp import ClientApp
    from flwr.clientapp.mod import fixedclipping_mod

    train_mods: list[Any] = [fixedclipping_mod] if dp == "client" else []
    if record:
        train_mods.append(record_plaintext)
    app = ClientApp()
    app.train(mods=train_mods)(_train)
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


def with_dp(strategy: Any, config: Any) -> Any:
    """``strategy`` wrapped in Flower's fixed-clipping DP wrapper the run config names (every
    client sampled each round), or unchanged without DP."""
    from flwr.serverapp.strategy import (
        DifferentialPrivacyClientSideFixedClipping,
        DifferentialPrivacyServerSideFixedClipping,
    )

    placement = str(config.get(DP, "none"))
    wrappers = {"client": DifferentialPrivacyClientSideFixedClipping,
                "server": DifferentialPrivacyServerSideFixedClipping}
    if placement not in wrappers:
        return strategy
    return wrappers[placement](strategy, noise_multiplier=float(config[NOISE_MULTIPLIER]),
                               clipping_norm=float(config[CLIPPING_NORM]),
                               num_sampled_clients=int(config[CLIENTS]))


def _main(grid: Any, context: Any) -> None:
    from flwr.app import ConfigRecord, MetricRecord

    config = context.run_config
    n_clients = int(config[CLIENTS])
    seed = torch_seed(generator(int(config[spool.SEED_KEY]), "flower/initial-model"))
    initial = initial_weights(architecture(config), seed)
    strategy = _counting_fedavg()(fraction_train=1.0, fraction_evaluate=1.0,
                                  min_train_nodes=n_clients, min_evaluate_nodes=n_clients,
                                  min_available_nodes=n_clients)
    outer = with_dp(strategy, config)
    result = outer.start(
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
    if outer is not strategy:  # the wrapper's settings as it ran
        context.state[DP_USED] = MetricRecord({
            "clipping-norm": float(outer.clipping_norm),
            "noise-multiplier": float(outer.noise_multiplier),
            "sampled-clients": int(outer.num_sampled_clients),
            "releases": len(strategy.aggregates)})


def server_app() -> Any:
    """The ServerApp (its ``main`` runs :func:`_main`)."""
    from flwr.serverapp import ServerApp

    app = ServerApp()
    app.main()(_main)
    return app
