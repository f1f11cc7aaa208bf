"""The shipped Flower app with SecAgg+: the FedAvg app of :mod:`.app` under Flower's own
secure aggregation (Bell et al., "Secure Single-Server Aggregation with (Poly)Logarithmic
Overhead", CCS 2020; Flower's ``secaggplus_mod`` and ``SecAggPlusWorkflow``).

Written the way Flower's secure-aggregation example is: Flower's SecAgg+ runs only in its
legacy ``DefaultWorkflow`` (a ``LegacyContext``, a ``flwr.server.strategy.FedAvg``, a
``NumPyClient``), so this app is that. The ClientApp's mods, outermost first:

1. :func:`~.secagg.record_secagg_secrets` (fedsec): the client's own SecAgg+ secrets;
2. ``secaggplus_mod`` (Flower): the four stages, masking the trained model;
3. :func:`~.client.record_plaintext` (fedsec): nearer the app, it sees the model before
   ``secaggplus_mod`` quantizes and masks it, so the truth is the plaintext update.

Each round is four train exchanges with every client (setup, share keys, collect masked
vectors, unmask) and one evaluate. The ServerApp counts, on its own, every message it sends
and receives (:data:`.app.COUNTS`) and keeps each round's aggregate and the final model in
its ``context.state`` (:func:`.app.aggregate_key`, :data:`.app.FINAL`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from fedsec.nn import torch_seed
from fedsec.protocols.flower import app, spool
from fedsec.protocols.flower.client import PARTITION_ID, expose_data, record_plaintext
from fedsec.protocols.flower.model import evaluate, initial_weights, train_locally
from fedsec.protocols.flower.recorder import wrapping_grid_class
from fedsec.protocols.flower.secagg import record_secagg_secrets
from fedsec.seeding import generator

# -- run-config keys --------------------------------------------------------------------------
NUM_SHARES = "secagg-num-shares"
"""Shares per client (Flower's ``num_shares``): an int > 2, or 0 for every sampled client."""
THRESHOLD = "secagg-threshold"
"""Shares needed to rebuild a secret (Flower's ``reconstruction_threshold``), an int >= 2."""
CLIPPING_RANGE = "secagg-clipping-range"
QUANTIZATION_RANGE = "secagg-quantization-range"
MODULUS_RANGE = "secagg-modulus-range"
MAX_WEIGHT = "secagg-max-weight"
"""The largest example count a client reports (Flower's ``max_weight``)."""


def _names(config: Any) -> list[str]:
    """The model's array names in Flower's order (the torch ``state_dict`` order)."""
    return list(initial_weights(app.architecture(config), 0))


@cache
def _client_class() -> type:
    from flwr.client import NumPyClient

    class PerceptronClient(NumPyClient):
        """The FedAvg app's client as a NumPyClient (what Flower's SecAgg+ workflow drives)."""

        def __init__(self, context: Any) -> None:
            self.context = context
            self.config = context.run_config
            self.partition = int(context.node_config[PARTITION_ID])
            self.names = _names(self.config)

        def fit(self, parameters: list[Any], config: dict[str, Any]) -> tuple[Any, ...]:
            X, y = app.client_shard(self.config, self.partition)
            expose_data(self.context, X, y)
            server_round = int(config["server-round"])
            seed = torch_seed(generator(app.own_seed(self.context),
                                        f"flower/train/round{server_round}"))
            weights, loss = train_locally(
                app.architecture(self.config), dict(zip(self.names, parameters, strict=True)),
                X, y, epochs=int(config[app.LOCAL_EPOCHS]),
                batch_size=app.batch_of(int(config[app.BATCH_SIZE]), len(y)),
                lr=float(config[app.LR]), seed=seed)
            return list(weights.values()), len(y), {"train-loss": loss}

        def evaluate(self, parameters: list[Any], config: dict[str, Any]) -> tuple[Any, ...]:
            X, y = app.client_shard(self.config, self.partition)
            loss, accuracy = evaluate(app.architecture(self.config),
                                      dict(zip(self.names, parameters, strict=True)), X, y)
            return loss, len(y), {"eval-acc": accuracy}

    return PerceptronClient


def _client_fn(context: Any) -> Any:
    return _client_class()(context).to_client()


def client_app(*, record: bool = True) -> Any:
    """The ClientApp with ``secaggplus_mod``; ``record`` places fedsec's two mods around it
    (the secrets outside, the plaintext update inside)."""
    from flwr.client.mod import secaggplus_mod
    from flwr.clientapp import ClientApp

    mods: list[Any] = ([record_secagg_secrets, secaggplus_mod, record_plaintext] if record
                       else [secaggplus_mod])
    return ClientApp(client_fn=_client_fn, mods=mods)


@cache
def _strategy_class() -> type:
    """Flower's legacy FedAvg, keeping each round's aggregate."""
    from flwr.server.strategy import FedAvg

    class KeepingFedAvg(FedAvg):
        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            self.aggregates: dict[int, Any] = {}

        def aggregate_fit(self, server_round: int, results: Any, failures: Any) -> Any:
            parameters, metrics = super().aggregate_fit(server_round, results, failures)
            if parameters is not None:
                self.aggregates[server_round] = parameters
            return parameters, metrics

    return KeepingFedAvg


@cache
def _counting_grid_class() -> type:
    """A Grid that counts what the app sends and receives (independently of fedsec's
    recording Grid, which it wraps)."""
    class CountingGrid(wrapping_grid_class()):  # type: ignore[misc]
        def __init__(self, inner: Any) -> None:
            super().__init__(inner)
            self.instructions = 0
            self.replies = 0

        def push_messages(self, messages: Iterable[Any]) -> Iterable[str]:
            messages = list(messages)
            self.instructions += len(messages)
            return self.inner.push_messages(messages)

        def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Any]:
            replies = list(self.inner.pull_messages(message_ids))
            self.replies += len(replies)
            return replies

        def send_and_receive(self, messages: Iterable[Any], *,
                             timeout: float | None = None) -> Iterable[Any]:
            messages = list(messages)
            self.instructions += len(messages)
            replies = list(self.inner.send_and_receive(messages, timeout=timeout))
            self.replies += len(replies)
            return replies

    return CountingGrid


def _named(config: Any, parameters: Any) -> Any:
    from flwr.common import parameters_to_ndarrays

    return app.array_record(dict(zip(_names(config), parameters_to_ndarrays(parameters),
                                     strict=True)))


def _main(grid: Any, context: Any) -> None:
    from flwr.app import MetricRecord
    from flwr.common import ndarrays_to_parameters
    from flwr.compat.common.recorddict_compat import arrayrecord_to_parameters
    from flwr.server import LegacyContext, ServerConfig
    from flwr.server.workflow import DefaultWorkflow, SecAggPlusWorkflow
    from flwr.server.workflow.constant import MAIN_PARAMS_RECORD

    config = context.run_config
    n_clients = int(config[app.CLIENTS])
    seed = torch_seed(generator(int(config[spool.SEED_KEY]), "flower/initial-model"))
    initial = initial_weights(app.architecture(config), seed)
    train_config = {app.LR: float(config[app.LR]),
                    app.LOCAL_EPOCHS: int(config[app.LOCAL_EPOCHS]),
                    app.BATCH_SIZE: int(config[app.BATCH_SIZE])}
    strategy = _strategy_class()(
        fraction_fit=1.0, fraction_evaluate=1.0, min_fit_clients=n_clients,
        min_evaluate_clients=n_clients, min_available_clients=n_clients,
        initial_parameters=ndarrays_to_parameters(list(initial.values())),
        on_fit_config_fn=lambda server_round: {**train_config, "server-round": server_round})
    timeout = float(config[app.TIMEOUT])
    legacy = LegacyContext(context=context,
                           config=ServerConfig(num_rounds=int(config[app.ROUNDS]),
                                               round_timeout=timeout),
                           strategy=strategy)
    shares = int(config[NUM_SHARES])
    workflow = DefaultWorkflow(fit_workflow=SecAggPlusWorkflow(
        num_shares=shares if shares > 0 else 1.0,
        reconstruction_threshold=int(config[THRESHOLD]),
        max_weight=float(config[MAX_WEIGHT]), clipping_range=float(config[CLIPPING_RANGE]),
        quantization_range=int(config[QUANTIZATION_RANGE]),
        modulus_range=int(config[MODULUS_RANGE]), timeout=timeout))
    counting = _counting_grid_class()(grid)
    workflow(counting, legacy)
    final = arrayrecord_to_parameters(legacy.state.array_records[MAIN_PARAMS_RECORD],
                                      keep_input=True)
    context.state[app.FINAL] = _named(config, final)
    context.state[app.COUNTS] = MetricRecord({"instructions": counting.instructions,
                                              "replies": counting.replies})
    for server_round, parameters in strategy.aggregates.items():
        context.state[app.aggregate_key(server_round)] = _named(config, parameters)


def server_app() -> Any:
    """The ServerApp (its ``main`` runs Flower's DefaultWorkflow with SecAgg+)."""
    from flwr.serverapp import ServerApp

    server = ServerApp()
    server.main()(_main)
    return server
