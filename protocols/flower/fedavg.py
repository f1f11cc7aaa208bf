"""``flower-fedavg``: the shipped Flower app (:mod:`.app`) run and recorded by fedsec.

McMahan et al., "Communication-Efficient Learning of Deep Networks from Decentralized Data"
(AISTATS 2017), as Flower 1.42's ``FedAvg`` strategy runs it, on a one-hidden-layer
perceptron; by default two clients on the bundled 5,000-image MNIST subset, one round.
With ``secagg=true`` the same app runs under Flower's SecAgg+ (:mod:`.secagg_app`): the
server then receives only masked, quantized models and their sum. With ``dp="client"`` or
``dp="server"`` it runs under Flower's fixed-clipping differential privacy (:mod:`.app`):
client-side, what crosses is each update clipped to ``clipping_norm`` (the truth is the
update before clipping); server-side, what crosses is the plaintext update, which the server
clips itself. Either way the server adds the noise to the aggregate, and the run's metrics
record the DP settings the wrapper ran with (:data:`.tags.DP_METRICS`); the noise is declared to
the accountant (:meth:`FlowerFedAvg.mechanisms`). ``batch_size=0``
with one local epoch is FedSGD: each client's update is ``-lr`` times its full-batch gradient.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from fedsec.declare import Bool, Choice, Declared, Float, Int, owner_of
from fedsec.errors import FedsecError, ValidationError
from fedsec.outcomes import Outcome
from fedsec.privacy.mechanism import Mechanism
from fedsec.protocols.flower import app, secagg_app, spool, tags
from fedsec.protocols.flower.model import Architecture, PerceptronModel, evaluate
from fedsec.protocols.flower.protocol import ENGINES, SERVER, FlowerProtocol
from fedsec.registry import register
from fedsec.validation import param_error

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation

OWNER = "protocol 'flower-fedavg'"


@register("protocol", "flower-fedavg")
class FlowerFedAvg(FlowerProtocol):
    """A real Flower app (FedAvg of a small PyTorch perceptron) in Flower's simulation engine, every
    message recorded (the flower extra).

    Flower's FedAvg of a small torch perceptron, in Flower's simulation engine.
    """

    paper = ("McMahan et al., Communication-Efficient Learning of Deep Networks from "
             "Decentralized Data, AISTATS 2017")
    default_dataset = "mnist5k"
    exposes = frozenset({tags.TRAIN_INSTRUCTION, tags.TRAIN_INSTRUCTION_ARRAYS,
                         tags.TRAIN_REPLY, tags.TRAIN_REPLY_ARRAYS, tags.EVALUATE_INSTRUCTION,
                         tags.EVALUATE_INSTRUCTION_ARRAYS, tags.EVALUATE_REPLY,
                         # under SecAgg+ (Flower's legacy records)
                         tags.TRAIN_INSTRUCTION_FITINS, tags.EVALUATE_INSTRUCTION_EVALUATEINS})

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        rounds: Annotated[int, Int(min=1)] = 1
        """FedAvg rounds (the app's num-server-rounds)."""
        local_epochs: Annotated[int, Int(min=1)] = 1
        """Each client's epochs of SGD per round."""
        batch_size: Annotated[int, Int(min=0)] = 32
        """Mini-batch size of local training; 0: each client's whole shard in one batch (with
        ``local_epochs=1``, one full-batch SGD step per round: FedSGD)."""
        lr: Annotated[float, Float(min=0.0, min_inclusive=False)] = 0.1
        """Learning rate of local SGD."""
        hidden: Annotated[int, Int(min=1)] = 32
        """Hidden units of the perceptron."""
        record_plaintext: Annotated[bool, Bool()] = True
        """Place fedsec's truth mods in the ClientApp (the clients' plaintext updates, and
        under SecAgg+ their own SecAgg+ secrets, become ground truth); off, the store holds
        only the clients' rows."""
        round_timeout: Annotated[float, Float(min=0.0, min_inclusive=False)] = 600.0
        """Seconds the strategy waits for the clients' replies each round."""
        secagg: Annotated[bool, Bool()] = False
        """Run the app under Flower's SecAgg+ (``secaggplus_mod`` on the ClientApp,
        ``SecAggPlusWorkflow`` on the ServerApp; :mod:`.secagg_app`)."""
        secagg_threshold: Annotated[int, Int(min=2)] = 2
        """SecAgg+'s reconstruction threshold: shares needed to rebuild a client's secret
        (at most the number of clients)."""
        secagg_shares: Annotated[int, Int(min=0)] = 0
        """Shares each client deals (its neighbourhood, itself included): 0 for every client,
        else an int > ``secagg_threshold`` and at least 3."""
        secagg_clipping_range: Annotated[float, Float(min=0.0, min_inclusive=False)] = 8.0
        """SecAgg+ clips every weight to [-range, range] before quantizing."""
        secagg_quantization_range: Annotated[int, Int(min=2)] = 4194304
        """SecAgg+ quantizes each weight to an integer below this (2**22)."""
        secagg_modulus_range: Annotated[int, Int(min=4, max=2**32)] = 4294967296
        """SecAgg+ masks modulo this power of 2, above secagg_quantization_range and at most
        2**32 (the default)."""
        secagg_max_weight: Annotated[float, Float(min=0.0)] = 0.0
        """The largest example count a client may report (SecAgg+ scales each model by its
        count over this); 0 for the largest client's."""
        dp: Annotated[str, Choice(*app.DP_PLACEMENTS)] = "none"
        """Flower's fixed-clipping differential privacy: ``none``; ``client``
        (``fixedclipping_mod`` clips each update on the client before it is sent,
        ``DifferentialPrivacyClientSideFixedClipping`` noises the aggregate); ``server``
        (``DifferentialPrivacyServerSideFixedClipping`` clips the plaintext updates it
        received and noises their aggregate)."""
        clipping_norm: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1.0
        """The L2 norm (over all arrays) each update is clipped to under DP."""
        noise_multiplier: Annotated[float, Float(min=0.0)] = 1.0
        """Flower's noise multiplier under DP: the aggregate gets Gaussian noise of standard
        deviation ``noise_multiplier x clipping_norm / clients`` (0: clipping only)."""
        engine: Annotated[str, Choice(*ENGINES)] = "simulation"
        """Flower's engine: ``simulation`` (Ray, in this process) or ``deployment`` (a
        SuperLink and one SuperNode per client, processes of their own on 127.0.0.1, TLS)."""

        def __post_init__(self) -> None:
            owner = owner_of(self)
            if self.secagg_shares and self.secagg_shares <= max(2, self.secagg_threshold):
                raise param_error(owner, "secagg_shares",
                                  f"0 or an int > 2 and > secagg_threshold "
                                  f"({self.secagg_threshold})", self.secagg_shares)
            modulus = self.secagg_modulus_range
            if modulus <= self.secagg_quantization_range or modulus & (modulus - 1):
                raise param_error(owner, "secagg_modulus_range",
                                  "a power of 2 above secagg_quantization_range "
                                  f"({self.secagg_quantization_range}), at most 2**32", modulus)
            if self.dp != "none" and self.secagg:
                raise ValidationError(
                    f"The 'dp' parameter of {owner} must be 'none' when secagg=true: the "
                    f"shipped app runs Flower's DP wrappers only without SecAgg+. Got "
                    f"{self.dp!r} instead; set dp='none' or secagg=false.")

    def mechanisms(self) -> tuple[Mechanism, ...]:
        """Flower's central DP under ``dp``: each round its wrapper adds ``N(0, (z C / n)^2)``
        (``compute_stdv``) to every value of the FedAvg mean of the ``n`` sampled clients'
        updates, each clipped to ``C``. Scaled by the public ``n``, that is the sum of the
        clipped updates with noise ``z C``, which one client's update, added or removed, moves
        by at most ``C``: Flower's own accounting model (add-or-remove-one, no sampling
        amplification, uniform FedAvg weights), the app sampling every client every round. The
        server sees the updates before its noise, so the guarantee does not hold against it."""
        p = self.params
        if p.dp == "none":
            return ()
        return (Mechanism(
            distribution="gaussian", noise_scale=float(p.noise_multiplier * p.clipping_norm),
            sensitivity=float(p.clipping_norm), sensitivity_source="clipping",
            releases=p.rounds, sampling_rate=1.0,
            unit="one client, added or removed: its update of every round, clipped to "
                 "clipping_norm (client-level; clients weighted equally, the mean's "
                 "denominator the number of sampled clients)",
            scope="the global model the server releases after each round (Flower's noised "
                  "FedAvg aggregate); not the clipped updates the server receives, nor the "
                  "train and evaluate metrics the clients report",
            protocol=self.name, trusted=(SERVER,)),)

    def apps(self) -> tuple[Any, Any]:
        if self.params.secagg:
            return (secagg_app.server_app(),
                    secagg_app.client_app(record=self.params.record_plaintext))
        return app.server_app(), app.client_app(record=self.params.record_plaintext,
                                                dp=self.params.dp)

    def run_config(self, federation: Federation) -> dict[str, Any]:
        p = self.params
        shards = [p.shard for p in federation.data_parties() if p.shard is not None]
        n_inputs = shards[0].cells[0].X.shape[1]
        test = federation.test
        n_classes = (len(test.class_names) if test is not None and test.class_names
                     else int(max(int(np.max(np.asarray(s.cells[0].y))) for s in shards)) + 1)
        config = {app.N_CLASSES: n_classes, app.ROUNDS: p.rounds, app.CLIENTS: len(shards),
                  app.LOCAL_EPOCHS: p.local_epochs, app.BATCH_SIZE: p.batch_size, app.LR: p.lr,
                  app.HIDDEN: p.hidden, app.TIMEOUT: p.round_timeout, app.N_INPUTS: n_inputs}
        if p.dp != "none":
            config.update({app.DP: p.dp, app.CLIPPING_NORM: float(p.clipping_norm),
                           app.NOISE_MULTIPLIER: float(p.noise_multiplier)})
        if not p.secagg:
            return config
        if p.secagg_threshold > len(shards) or p.secagg_shares > len(shards):
            raise param_error(OWNER, "secagg_threshold" if p.secagg_threshold > len(shards)
                              else "secagg_shares",
                              f"at most the number of clients ({len(shards)}) under SecAgg+",
                              max(p.secagg_threshold, p.secagg_shares))
        largest = max(len(s.cells[0].X) for s in shards)
        return {**config, secagg_app.NUM_SHARES: p.secagg_shares,
                secagg_app.THRESHOLD: p.secagg_threshold,
                secagg_app.CLIPPING_RANGE: float(p.secagg_clipping_range),
                secagg_app.QUANTIZATION_RANGE: p.secagg_quantization_range,
                secagg_app.MODULUS_RANGE: p.secagg_modulus_range,
                secagg_app.MAX_WEIGHT: float(p.secagg_max_weight or largest)}

    def prepare(self, where: Path, federation: Federation) -> None:
        for partition, party in enumerate(federation.data_parties()):
            assert party.shard is not None  # data parties hold one
            (cell,) = party.held_shard().cells
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
        metrics: dict[str, Any] = {
            "app_instructions": int(counts["instructions"]),
            "app_replies": int(counts["replies"]),
            **dp_metrics(self.params.dp, state.get(app.DP_USED),
                         len(federation.data_parties()))}
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
        server = spool.party_seed(seed, SERVER)  # the ServerApp's, as in the run
        weights = initial_weights(architecture,
                                  torch_seed(generator(server, "flower/initial-model")))
        weights, _ = train_locally(architecture, weights, train.X, train.y,
                                   epochs=p.rounds * p.local_epochs,
                                   batch_size=app.batch_of(p.batch_size, train.n_samples),
                                   lr=p.lr, seed=torch_seed(generator(seed, "flower/reference")))
        loss, accuracy = evaluate(architecture, weights, test.X, test.y)
        return Outcome(metrics={"accuracy": accuracy, "log_loss": loss},
                       values={f"model/{name}": np.asarray(v, dtype=np.float64).ravel()
                               for name, v in weights.items()},
                       model=PerceptronModel(architecture, weights))


def dp_metrics(placement: str, used: Mapping[str, Any] | None,
               population: int) -> dict[str, Any]:
    """The DP a run used, as run metrics (:data:`.tags.DP_METRICS`): the placement, and with
    DP the settings Flower's wrapper ran with (``used``, its record in the ServerApp's state)
    and the noise's standard deviation on the aggregate, ``z C / sampled clients``, what an
    accountant composes ``dp_rounds`` times at sampling rate ``sampled / population``.

    >>> dp_metrics("none", None, 2)
    {'dp': 'none'}
    >>> m = dp_metrics("client", {"clipping-norm": 0.5, "noise-multiplier": 1.0,
    ...                           "sampled-clients": 2, "releases": 3}, 2)
    >>> m["dp_noise_stddev"], m["dp_rounds"]
    (0.25, 3)
    """
    if placement == "none" or used is None:
        return {tags.DP_PLACEMENT: "none"}
    norm, multiplier = float(used["clipping-norm"]), float(used["noise-multiplier"])
    sampled = int(used["sampled-clients"])
    return {tags.DP_PLACEMENT: placement, tags.DP_CLIPPING_NORM: norm,
            tags.DP_NOISE_MULTIPLIER: multiplier,
            tags.DP_NOISE_STDDEV: multiplier * norm / sampled,
            tags.DP_ROUNDS: int(used["releases"]), tags.DP_SAMPLED_CLIENTS: sampled,
            tags.DP_POPULATION: int(population)}
