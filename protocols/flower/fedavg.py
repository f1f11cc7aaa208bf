"""``flower-fedavg``: the shipped Flower app (:mod:`.app`) run and recorded by fedsec.

McMahan et al., "Communication-Efficient Learning of Deep Networks from Decentralized Data"
(AISTATS 2017), as Flower 1.42's ``FedAvg`` strategy runs it, on a one-hidden-layer
perceptron; by default two clients on the bundled 5,000-image MNIST subset, one round.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.errors import FedsecError
from fedsec.outcomes import Outcome
from fedsec.protocols.flower import app, spool, tags
from fedsec.protocols.flower.model import Architecture, PerceptronModel, evaluate
from fedsec.protocols.flower.protocol import FlowerProtocol
from fedsec.registry import register
from fedsec.validation import check_float, check_int, param_error

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation

OWNER = "protocol 'flower-fedavg'"


@register("protocol", "flower-fedavg")
class FlowerFedAvg(FlowerProtocol):
    """Flower's FedAvg of a small torch perceptron, in Flower's simulation engine."""

    summary = ("A real Flower app (FedAvg of a small PyTorch perceptron) in Flower's simulation "
               "engine, every message recorded (the flower extra).")
    paper = ("McMahan et al., Communication-Efficient Learning of Deep Networks from "
             "Decentralized Data, AISTATS 2017")
    default_dataset = "mnist5k"
    exposes = frozenset({tags.TRAIN_INSTRUCTION, tags.TRAIN_INSTRUCTION_ARRAYS,
                         tags.TRAIN_REPLY, tags.TRAIN_REPLY_ARRAYS, tags.EVALUATE_INSTRUCTION,
                         tags.EVALUATE_INSTRUCTION_ARRAYS, tags.EVALUATE_REPLY})

    @dataclass(frozen=True, kw_only=True)
    class Params:
        rounds: int = 1
        """FedAvg rounds (the app's num-server-rounds)."""
        local_epochs: int = 1
        """Each client's epochs of SGD per round."""
        batch_size: int = 32
        """Mini-batch size of local training."""
        lr: float = 0.1
        """Learning rate of local SGD."""
        hidden: int = 32
        """Hidden units of the perceptron."""
        record_plaintext: bool = True
        """Place fedsec's truth mod in the ClientApp (the clients' plaintext updates become
        ground truth); off, the store holds only the clients' rows."""
        round_timeout: float = 600.0
        """Seconds the strategy waits for the clients' replies each round."""

        def __post_init__(self) -> None:
            check_int(self.rounds, owner=OWNER, name="rounds", min_value=1)
            check_int(self.local_epochs, owner=OWNER, name="local_epochs", min_value=1)
            check_int(self.batch_size, owner=OWNER, name="batch_size", min_value=1)
            check_float(self.lr, owner=OWNER, name="lr", min_value=0.0, min_inclusive=False)
            check_int(self.hidden, owner=OWNER, name="hidden", min_value=1)
            check_float(self.round_timeout, owner=OWNER, name="round_timeout", min_value=0.0,
                        min_inclusive=False)
            if not isinstance(self.record_plaintext, bool):
                raise param_error(OWNER, "record_plaintext", "a bool", self.record_plaintext)

    def apps(self) -> tuple[Any, Any]:
        return app.server_app(), app.client_app(record=self.params.record_plaintext)

    def run_config(self, federation: Federation) -> dict[str, Any]:
        p = self.params
        shards = [p.shard for p in federation.data_parties() if p.shard is not None]
        n_inputs = shards[0].cells[0].X.shape[1]
        test = federation.test
        n_classes = (len(test.class_names) if test is not None and test.class_names
                     else int(max(int(np.max(s.cells[0].y)) for s in shards)) + 1)
        return {app.N_CLASSES: n_classes, app.ROUNDS: p.rounds, app.CLIENTS: len(shards),
                app.LOCAL_EPOCHS: p.local_epochs, app.BATCH_SIZE: p.batch_size, app.LR: p.lr,
                app.HIDDEN: p.hidden, app.TIMEOUT: p.round_timeout, app.N_INPUTS: n_inputs}

    def prepare(self, where: Path, federation: Federation) -> None:
        for partition, party in enumerate(federation.data_parties()):
            assert party.shard is not None  # data parties hold one
            (cell,) = party.shard.cells
            if cell.y is None:
                raise FedsecError(f"Client {party.name!r} holds no labels; the FedAvg app "
                                  "trains a classifier on each client's own labels.")
            spool.save_arrays(where / spool.SHARDS / f"{partition}.npz",
                              {"X": cell.X, "y": cell.y}, {"party": party.name})

    def outcome(self, server_context: Any, federation: Federation,
                summary: Mapping[str, Any]) -> Outcome:
        state = server_context.state
        final = {name: array.numpy() for name, array in state[app.FINAL].items()}
        counts = state[app.COUNTS]
        architecture = app.architecture(server_context.run_config)
        metrics: dict[str, float] = {
            "app_instructions": int(counts["instructions"]),
            "app_replies": int(counts["replies"])}
        test = federation.test
        if test is not None:
            loss, accuracy = evaluate(architecture, final, test.X, test.y)
            metrics.update(accuracy=accuracy, log_loss=loss)
        values = {f"model/{name}": np.asarray(v, dtype=np.float64).ravel()
                  for name, v in final.items()}
        aggregates = {}
        for r in range(1, self.params.rounds + 1):
            key = app.aggregate_key(r)
            if key in state:
                aggregates[f"flower/aggregate/round{r}"] = np.concatenate(
                    [np.asarray(a.numpy(), dtype=np.float64).ravel()
                     for a in state[key].values()])
        return Outcome(metrics=metrics, values=values, truth=aggregates,
                       model=PerceptronModel(architecture, final))

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        """The same perceptron trained centrally for ``rounds x local_epochs`` epochs."""
        from fedsec.nn import torch_seed
        from fedsec.protocols.flower.model import initial_weights, train_locally
        from fedsec.seeding import generator

        p = self.params
        architecture = Architecture(n_inputs=train.n_features, n_hidden=p.hidden,
                                    n_classes=len(test.class_names) or int(np.max(train.y)) + 1)
        weights = initial_weights(architecture,
                                  torch_seed(generator(seed, "flower/initial-model")))
        weights, _ = train_locally(architecture, weights, train.X, train.y,
                                   epochs=p.rounds * p.local_epochs, batch_size=p.batch_size,
                                   lr=p.lr, seed=torch_seed(generator(seed, "flower/reference")))
        loss, accuracy = evaluate(architecture, weights, test.X, test.y)
        return Outcome(metrics={"accuracy": accuracy, "log_loss": loss},
                       values={f"model/{name}": np.asarray(v, dtype=np.float64).ravel()
                               for name, v in weights.items()},
                       model=PerceptronModel(architecture, weights))

