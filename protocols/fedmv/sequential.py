"""S-FedMV (Algorithm 4): GRU feature extractors trained by FedAvg, then H-FedMV on features.

Each client holds every view of its own sequences (typing sessions, smart-watch recordings).
Per view, the server initialises a bidirectional GRU extractor (:mod:`.extractor`); each
FedAvg round it broadcasts every view's weights, each client trains ``local_epochs`` epochs of
RMSProp on its sequences (batches of ``batch_size`` in an order only it knows) and returns its
weights, and the server averages them with weights ``N_l / N`` (a weighted secure sum: under
``noise``, ``paillier`` or ``ckks`` the server sees only the total). Then each client extracts
its features with the final extractors and H-FedMV runs on them
(:func:`.horizontal.fit_rounds`). The local training the server sets (epochs, batch size,
learning rate, optimizer) travels in the broadcast's metadata: every client follows it, so
every observer of the broadcast knows it.

Optional update clipping and Gaussian noise (``clip``, ``noise_multiplier``; the
``update-noise`` defence sets them) bound what one update says about a client's sequences:
the client clips its change of weights to norm ``clip`` and adds ``N(0, (noise_multiplier *
clip)^2)`` to each value, from its own private stream.

Baselines (the paper's Table 3), with ``local_baselines``: each client trains its extractors
alone for the same number of epochs, then ``local_mvl_*`` is each client's MVL on its own
features (test rows through its own extractors), and ``local_hfedmv_*`` is H-FedMV on those
inconsistent features (its weights applied to each client's test features), both averaged over
clients. The centralized reference trains the extractors on every training row, then MVL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from fedsec import nn
from fedsec.backends.primitives import secure_sum
from fedsec.data.dataset import Dataset
from fedsec.data.sequences import SequenceLayout, sequence_layouts, split_present, to_steps
from fedsec.declare import Bool, Choice, Float, Int, owner_of
from fedsec.errors import ValidationError
from fedsec.interfaces import Defense, MaskingBackend
from fedsec.outcomes import Outcome
from fedsec.privacy.mechanism import Mechanism
from fedsec.protocols.fedmv import extractor, maths, tags
from fedsec.protocols.fedmv.horizontal import (
    HFedMVParams,
    fit_rounds,
    flatten_weights,
    local_fit,
    unflatten_weights,
)
from fedsec.protocols.fedmv.sequence_model import sequence_model
from fedsec.protocols.fedmv.setup import (
    SERVER,
    FederatedMVL,
    centralized,
    classification_metrics,
    initial_weights,
    labelled_clients,
    n_classes,
)
from fedsec.registry import register
from fedsec.seeding import generator

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation

Sequences = dict[str, tuple[np.ndarray, np.ndarray]]
"""Per view, the model inputs ``(n, T, c)`` and each sequence's length."""


@dataclass(frozen=True, kw_only=True)
class SFedMVParams(HFedMVParams):
    """H-FedMV's parameters (for the second stage), plus the extractors' FedAvg.

    ``hidden``: each GRU direction's state size (features per view: ``2 * hidden``).
    ``fedavg_rounds``, ``local_epochs``, ``batch_size``, ``lr``: FedAvg rounds, each client's
    RMSProp epochs per round, mini-batch size and learning rate (the paper: 150-170 rounds,
    10-15 epochs, batch 128, lr 0.001 or 0.005). ``optimizer``: ``rmsprop`` (the paper's) or
    ``sgd`` (plain; its update is a sum of gradients, RMSProp's first step only their signs).
    ``clip``, ``noise_multiplier``: update
    clipping and Gaussian noise (0: off). ``local_rows``: each client trains on its first
    ``local_rows`` sequences only (0: all), the local set size an audit sweeps.
    ``local_baselines``: also train every client's
    extractors alone (Table 3's local rows).
    """

    hidden: Annotated[int, Int(min=1)] = 16
    """State size of each GRU direction (features per view: 2 * hidden)."""
    fedavg_rounds: Annotated[int, Int(min=1)] = 10
    """FedAvg rounds training the extractors (the paper: 150-170)."""
    local_epochs: Annotated[int, Int(min=1)] = 2
    """Each client's epochs of local training per FedAvg round (the paper: 10-15)."""
    batch_size: Annotated[int, Int(min=1)] = 32
    """Mini-batch size of local training (the paper: 128)."""
    lr: Annotated[float, Float(min=0.0, min_inclusive=False)] = 0.005
    """Learning rate of local training (the paper: 0.001 or 0.005)."""
    optimizer: Annotated[str, Choice(*nn.OPTIMIZERS)] = "rmsprop"
    """Local optimizer: rmsprop (the paper's) or sgd (plain; its update is a sum of gradients,
    RMSProp's first step only their signs)."""
    clip: Annotated[float, Float(min=0.0)] = 0.0
    """Each client clips its change of weights to this L2 norm before sending it; 0: no clipping
    (the update-noise defence sets it)."""
    noise_multiplier: Annotated[float, Float(min=0.0)] = 0.0
    """Each clipped update value gets N(0, (noise_multiplier * clip)^2) noise from the client's
    private stream; 0: none; needs clip > 0."""
    local_rows: Annotated[int, Int(min=0)] = 0
    """Each client trains on its first local_rows sequences only; 0: all of them."""
    local_baselines: Annotated[bool, Bool()] = True
    """Also train every client's extractors alone, for the paper's Table 3 local rows (local_mvl_*,
    local_hfedmv_*)."""

    def __post_init__(self) -> None:
        if self.noise_multiplier and not self.clip:
            raise ValidationError(
                f"{owner_of(self)}: noise_multiplier={self.noise_multiplier} scales the noise to "
                "the clipping norm, which clip=0 leaves unset; set clip > 0 as well.")

    @property
    def local(self) -> nn.LocalTraining:
        return nn.LocalTraining(epochs=self.local_epochs, batch_size=self.batch_size,
                                       lr=self.lr, optimizer=self.optimizer)


def sequences(X: np.ndarray, dataset: Dataset, layouts: dict[str, SequenceLayout]) -> Sequences:
    """Every view of rows ``X`` (columns of ``dataset``) as model inputs and lengths."""
    return {view: split_present(to_steps(X[:, list(dataset.feature_groups[view])], layout),
                                layout) for view, layout in layouts.items()}


def features(models: dict[str, Any], data: Sequences) -> list[np.ndarray]:
    """Every view's extracted features, in view order."""
    return [extractor.extract(models[v], *data[v]) for v in models]


def privatize(new: np.ndarray, start: np.ndarray, clip: float, noise_multiplier: float,
              rng: np.random.Generator) -> np.ndarray:
    """``start`` plus the change ``new - start`` clipped to norm ``clip`` and noised.

    Examples
    --------
    >>> out = privatize(np.array([3.0, 4.0]), np.zeros(2), 1.0, 0.0, np.random.default_rng(0))
    >>> out.tolist()
    [0.6000000000000001, 0.8]
    """
    if not clip:
        return new
    delta = new - start
    delta = delta * min(1.0, clip / max(float(np.linalg.norm(delta)), maths.TINY))
    return start + delta + rng.normal(0.0, noise_multiplier * clip, size=delta.shape)


def clipped_update_noise(clip: float, noise_multiplier: float, rounds: int, *,
                         defense: str = "", protocol: str = "") -> Mechanism:
    """What :func:`privatize` releases, as the accountant reads it: Gaussian noise of
    multiplier ``noise_multiplier`` on an update clipped to ``clip``, one release per client
    and FedAvg round (every client takes part in every round).

    Examples
    --------
    >>> m = clipped_update_noise(1.0, 0.5, 3, protocol="s-fedmv")
    >>> m.noise_multiplier, m.releases, m.declared_by
    (0.5, 3, "protocol 's-fedmv'")
    """
    return Mechanism(distribution="gaussian", noise_scale=float(noise_multiplier * clip),
                     sensitivity=float(clip), sensitivity_source="clipping", releases=rounds,
                     unit="one client, added or removed: its update of every round, each "
                          "clipped to norm clip",
                     scope="the extractor updates of S-FedMV's FedAvg rounds (not the row "
                           "counts sent beside them, nor the H-FedMV rounds after)",
                     defense=defense, protocol=protocol,
                     parameters=("clip", "noise_multiplier"))


def train_extractors(models: dict[str, Any], data: Sequences, y: np.ndarray,
                     local: nn.LocalTraining, seed: int) -> np.ndarray:
    """Train every view's extractor on ``data``; all their weights, flattened in view order."""
    for i, view in enumerate(models):
        extractor.train(models[view], *data[view], y, local, seed + i)
    return np.concatenate([nn.flatten(m) for m in models.values()])


def load_all(models: dict[str, Any], vector: np.ndarray) -> None:
    """Set every view's extractor from one flattened vector."""
    start = 0
    for model in models.values():
        size = sum(int(np.prod(s)) for _, s in nn.layout_of(model))
        nn.load_flat(model, vector[start:start + size])
        start += size


@register("protocol", "s-fedmv")
class SFedMV(FederatedMVL):
    """Sequential federated MVL: per view a bidirectional GRU trained by FedAvg (a weighted secure
    sum of the clients' weights), then H-FedMV on its features.

    Sequential federated multi-view learning: FedAvg'd GRU extractors, then H-FedMV.
    """

    default_dataset = "keystrokes"
    partition_kinds = ("horizontal",)
    default_partition = "horizontal:by=site"
    exposes = frozenset({tags.EXTRACTOR_GLOBAL, tags.EXTRACTOR_UPDATE, tags.GLOBAL_WEIGHTS,
                         tags.LOCAL_WEIGHTS})
    scalings = ("none",)
    Params = SFedMVParams

    def agreement_rtol(self, backend: MaskingBackend) -> float:
        """No agreement is claimed: FedAvg'd extractors are not the pooled ones."""
        return float("inf")

    def mechanisms(self) -> tuple[Mechanism, ...]:
        """``clip`` and ``noise_multiplier`` set directly: DP-FedAvg's client-side noise, as
        the ``update-noise`` defence declares it (which, when it sets them, declares it
        instead)."""
        p = self.params
        if not p.noise_multiplier:
            return ()
        return (clipped_update_noise(p.clip, p.noise_multiplier, p.fedavg_rounds,
                                     protocol=self.name),)

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        p = self.params
        test, clients = labelled_clients(federation, self.name)
        layouts = sequence_layouts(test)
        C = n_classes(test)
        rows = slice(p.local_rows or None)
        data = {c.name: sequences(c.held_shard().X[rows], test, layouts)
                for c in clients}
        labels = {c.name: np.asarray(c.held_shard().y)[rows] for c in clients}
        for c in clients:  # the ground truth an inversion is scored against
            c.private[tags.TRAINED_ROWS] = c.held_shard().X[rows]
            c.private[tags.TRAINED_LABELS] = labels[c.name]
        test_data = sequences(test.X, test, layouts)
        specs = {v: extractor.ExtractorSpec(len(lay.inputs), p.hidden, C)
                 for v, lay in layouts.items()}
        with nn.deterministic(0):
            models = _initial_models(specs, federation.secret_seed)
            start = np.concatenate([nn.flatten(m) for m in models.values()])
            meta = _meta(models, specs, layouts, p)
            weights = self._fedavg(federation, backend, models, start, data, labels, meta)
            load_all(models, weights)
            client_features = {}
            for client in clients:
                with federation.network.compute(client.name):
                    client_features[client.name] = (features(models, data[client.name]),
                                                    labels[client.name])
            test_features = features(models, test_data)
            baselines = (self._local_baselines(federation.secret_seed, specs, data, labels,
                                               test_data, test.y, C)
                         if p.local_baselines else {})
        outcome = fit_rounds(federation, backend, p, client_features, list(layouts),
                             test_features, test.y, C, what="s-fedmv stage 2")
        metrics = dict(outcome.metrics)
        metrics.update(baselines, fedavg_rounds=p.fedavg_rounds)
        model = sequence_model(test.feature_groups, layouts, specs, models, outcome.model)
        return Outcome(metrics=metrics, values=outcome.values, model=model)

    def _fedavg(self, federation: Federation, backend: MaskingBackend, models: dict[str, Any],
                weights: np.ndarray, data: dict[str, Sequences], labels: dict[str, np.ndarray],
                meta: dict[str, Any]) -> np.ndarray:
        p, net = self.params, federation.network
        names = list(data)
        for round_ in range(1, p.fedavg_rounds + 1):
            with net.stage("features", round=round_):
                received = net.broadcast(SERVER, names, tags.EXTRACTOR_GLOBAL, weights,
                                         meta=meta)
                vectors = {}
                for name in names:
                    party = federation.party(name)
                    with net.compute(name):
                        load_all(models, received[name])
                        new = train_extractors(models, data[name], labels[name], p.local,
                                               nn.torch_seed(party.rng))
                        new = privatize(new, received[name], p.clip, p.noise_multiplier,
                                        party.rng)
                        n_rows = float(len(labels[name]))
                        vectors[name] = np.concatenate([[n_rows], n_rows * new])
                total = secure_sum(federation, backend, vectors, SERVER,
                                   tag=tags.EXTRACTOR_UPDATE, meta=meta)
                with net.compute(SERVER):
                    weights = total[1:] / total[0]
            federation.advance("s-fedmv FedAvg", round_, p.fedavg_rounds, "round")
        return weights

    def _local_baselines(self, seed: int, specs: dict[str, extractor.ExtractorSpec],
                         data: dict[str, Sequences],
                         labels: dict[str, np.ndarray], test_data: Sequences,
                         test_y: np.ndarray, C: int) -> dict[str, float]:
        """Table 3's local rows: every client's extractors trained alone (see the module)."""
        p = self.params
        epochs = dataclasses.replace(p.local, epochs=p.fedavg_rounds * p.local_epochs)
        own: dict[str, tuple[list[np.ndarray], np.ndarray]] = {}
        own_test: dict[str, list[np.ndarray]] = {}
        for i, name in enumerate(data):
            models = _initial_models(specs, seed)
            train_extractors(models, data[name], labels[name], epochs,
                             nn.torch_seed(generator(seed, f"fedmv/sequential/local/{i}")))
            own[name] = (features(models, data[name]), labels[name])
            own_test[name] = features(models, test_data)
        zetas = [p.zeta] * len(specs)
        views = list(specs)

        def score(Ws: list[np.ndarray], name: str) -> dict[str, float]:
            return classification_metrics(test_y, maths.predict(
                own_test[name], Ws, zetas, tol=p.test_tol, max_iter=p.max_test_steps))

        shapes = [(X.shape[1], C) for X in next(iter(own_test.values()))]
        W0 = flatten_weights([initial_weights(seed, v, d, C) for v, (d, _) in
                              zip(views, shapes, strict=True)])
        local_mvl = [score(unflatten_weights(local_fit(*own[n], W0, shapes, C, p, zetas,
                                                       p.settings), shapes), n) for n in own]
        averaged = _offline_hfedmv(own, W0, shapes, C, p)
        local_h = [score(averaged, n) for n in own]
        out = {}
        for prefix, rows in (("local_mvl", local_mvl), ("local_hfedmv", local_h)):
            out.update({f"{prefix}_{k}": float(np.mean([m[k] for m in rows]))
                        for k in ("accuracy", "f1")})
        return out

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        """Extractors trained on every training row (same epochs), then centralized MVL."""
        p = self.params
        layouts = sequence_layouts(train)
        C = n_classes(train)
        specs = {v: extractor.ExtractorSpec(len(lay.inputs), p.hidden, C)
                 for v, lay in layouts.items()}
        epochs = dataclasses.replace(p.local, epochs=p.fedavg_rounds * p.local_epochs)
        with nn.deterministic(0):
            models = _initial_models(specs, seed)
            data = sequences(train.X, train, layouts)
            train_extractors(models, data, train.y, epochs,
                             nn.torch_seed(generator(seed, "fedmv/sequential/centralized")))
            train_features = _feature_dataset(train, features(models, data), list(specs))
            test_features = _feature_dataset(
                test, features(models, sequences(test.X, test, layouts)), list(specs))
        outcome = centralized(p, train_features, test_features, seed)
        model = sequence_model(train.feature_groups, layouts, specs, models, outcome.model.head)
        return dataclasses.replace(outcome, model=model)


def _initial_models(specs: dict[str, extractor.ExtractorSpec], seed: int) -> dict[str, Any]:
    """The server's starting extractors, one per view, from the run's seed."""
    return {v: extractor.build(spec, nn.torch_seed(generator(seed, f"fedmv/sequential/init/{v}")))
            for v, spec in specs.items()}


def _meta(models: dict[str, Any], specs: dict[str, extractor.ExtractorSpec],
          layouts: dict[str, SequenceLayout], p: SFedMVParams) -> dict[str, Any]:
    """What the broadcast says about its weights: layouts, architectures, local training."""
    return {tags.VIEWS: list(models),
            tags.LAYOUTS: [nn.layout_meta(nn.layout_of(m)) for m in models.values()],
            tags.EXTRACTORS: [specs[v].to_meta() for v in models],
            tags.SEQUENCES: [{"length": layouts[v].length, "channels": list(layouts[v].channels)}
                             for v in models],
            tags.LOCAL_TRAINING: p.local.to_meta()}


def _feature_dataset(source: Dataset, views: list[np.ndarray], names: list[str]) -> Dataset:
    """The extracted features as a dataset whose feature groups are the views."""
    X = np.concatenate(views, axis=1)
    groups, start = {}, 0
    for name, block in zip(names, views, strict=True):
        groups[name] = tuple(range(start, start + block.shape[1]))
        start += block.shape[1]
    return Dataset(name=f"{source.name}:features", X=X, y=source.y, task=source.task,
                   class_names=source.class_names, feature_groups=groups)


def _offline_hfedmv(data: dict[str, tuple[list[np.ndarray], np.ndarray]], W0: np.ndarray,
                    shapes: list[tuple[int, int]], C: int, p: SFedMVParams) -> list[np.ndarray]:
    """H-FedMV's rounds computed in one place (a baseline: no messages, nothing to attack)."""
    zetas = [p.zeta] * len(shapes)
    flat = W0
    total = float(sum(len(y) for _, y in data.values()))
    for _ in range(p.rounds):
        flat = np.asarray(sum(len(y) / total * local_fit(Xs, y, flat, shapes, C, p, zetas,
                                                         p.settings)
                              for Xs, y in data.values()))
    return unflatten_weights(flat, shapes)
