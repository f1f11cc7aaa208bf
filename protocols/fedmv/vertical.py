"""MVL (Algorithm 1, centralized) and V-FedMV (Algorithm 2: one client per view).

V-FedMV: client k holds view k of every sample (training and test rows), the server holds
``Y``. Each round the server sends the consensus ``Z``; each client updates ``W_k`` (IRLS)
and ``Z_k`` locally and returns ``zeta_k`` and ``Z_k``; the server updates ``Z``. The test
phase exchanges ``Z_k^test`` and ``Z^test`` until the consensus settles. The updates are
exactly the centralized ones, so the run equals ``mvl`` for the same seed (same starting
points, drawn from the run's seed per view).

Protection: the server needs only ``sum_k zeta_k Z_k`` and ``sum_k zeta_k``, so each client's
``[zeta_k, zeta_k Z_k]`` goes through the backend's secure sum. Under ``plain`` (the paper's
setting) every ``Z_k`` is readable, which is what the attacks test; under ``noise``,
``paillier`` or ``ckks`` the server sees only the sum over views. ``Z`` and ``Z^test`` go back
in the clear: every client needs them. The labels reach the server once, in the clear, from
the client the partition gives them to (``fedmv.labels``): the paper's server simply holds
them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.backends.primitives import secure_sum
from fedsec.errors import ValidationError
from fedsec.interfaces import CentralizedProtocol, Defense, MaskingBackend
from fedsec.outcomes import Outcome
from fedsec.protocols.fedmv import maths, tags
from fedsec.protocols.fedmv.model import multiview_model
from fedsec.protocols.fedmv.setup import (
    DEFAULT_DATASET,
    PAPER,
    SERVER,
    FederatedMVL,
    MVLParams,
    centralized,
    classification_metrics,
    initial_consensus,
    initial_estimate,
    initial_weights,
    view_columns,
)
from fedsec.registry import register

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation, Party

TINY = maths.TINY


@register("protocol", "mvl")
class MVL(CentralizedProtocol):
    """Centralized multi-view learning (l2,1 view weights, consensus Z): FedMV's reference.

    Centralized multi-view learning: one site holds every view of every sample.
    """

    paper = PAPER
    default_dataset = DEFAULT_DATASET
    instead = "v-fedmv (one client per view) or h-fedmv (clients holding rows)"
    Params = MVLParams

    def solve(self, train: Dataset, test: Dataset, seed: int) -> Outcome:
        return centralized(self.params, train, test, seed)


@register("protocol", "single-view")
class SingleView(CentralizedProtocol):
    """Single-view baseline: l2,1-regularised least squares on one-hot labels.

    The single-view baseline: ``argmin_W ||X W - Y||^2 + beta ||W||_{2,1}`` on every column.

    Choose the view with the dataset (``mfeat:views=fou``); the paper's "w/o FL" rows.
    """

    paper = PAPER
    default_dataset = "mfeat:views=fou"
    instead = "v-fedmv or h-fedmv"
    Params = MVLParams

    def solve(self, train: Dataset, test: Dataset, seed: int) -> Outcome:
        C = len(test.class_names)
        W = maths.single_view(train.X, maths.one_hot(train.y, C), self.params.beta,
                              settings=self.params.settings)
        model = multiview_model([np.arange(train.n_features)], [W], self.params.zeta,
                                self.params.test_tol, self.params.max_test_steps)
        scores = model.decision_function(test.X)  # one view: X W
        return Outcome(metrics=classification_metrics(test.y, scores),
                       values={"W": W, "test_scores": scores}, model=model)


@register("protocol", "v-fedmv")
class VFedMV(FederatedMVL):
    """Vertical federated MVL: clients send zeta_k and Z_k (through the backend's sum), the server
    holding Y returns the consensus Z.

    Vertical federated multi-view learning: each client holds one view of every sample.
    """

    partition_kinds = ("vertical",)
    default_partition = "vertical:by=groups"
    exposes = frozenset({tags.LABELS, tags.CONSENSUS, tags.VIEW_ESTIMATE, tags.TEST_ESTIMATE,
                         tags.TEST_CONSENSUS})
    Params = MVLParams

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        p = self.params
        net = federation.network
        test = federation.test
        if test is None:
            raise ValidationError("v-fedmv has a test phase and needs the run's test rows.")
        views = view_columns(test.feature_groups)
        clients = self._clients(federation, views)
        names = [c.name for c in clients]
        holder = next(c for c in clients if c.shard is not None and c.held_shard().y is not None)
        C = len(test.class_names)
        N = clients[0].held_shard().n_rows
        zeta = p.zeta
        with net.stage("setup", round=0):
            with net.compute(holder.name):
                labels = maths.one_hot(np.asarray(holder.held_shard().y), C)
            Y = net.send(holder.name, SERVER, tags.LABELS, labels)
            Z = initial_consensus(federation.secret_seed, N, C)
            state = {}
            for client, view in zip(clients, views, strict=True):
                with net.compute(client.name):
                    X = client.held_shard().X
                    state[client.name] = {
                        "X": X, "gram": X.T @ X,
                        "W": initial_weights(federation.secret_seed, view, X.shape[1], C),
                        "Z": initial_estimate(federation.secret_seed, view, N, C)}
                    client.private[tags.INITIAL_WEIGHTS] = state[client.name]["W"]
                    client.private[tags.INITIAL_ESTIMATE] = state[client.name]["Z"]
        rounds, converged = 0, False
        for round_ in range(1, p.max_rounds + 1):
            rounds = round_
            with net.stage("train", round=round_):
                received = net.broadcast(SERVER, names, tags.CONSENSUS, Z)
                vectors = {}
                for client in clients:
                    s = state[client.name]
                    with net.compute(client.name):
                        s["W"], _ = maths.irls_weights(
                            s["X"], s["Z"], p.beta, s["W"], eps=p.eps, tol=p.inner_tol,
                            max_iter=p.max_inner, gram=s["gram"])
                        s["Z"] = maths.view_estimate(s["X"] @ s["W"], received[client.name],
                                                     zeta)
                        vectors[client.name] = _contribution(zeta, s["Z"])
                total = secure_sum(federation, backend, vectors, SERVER, tag=tags.VIEW_ESTIMATE,
                                   meta={tags.SHAPE: [N, C]})
                with net.compute(SERVER):
                    Z_new = maths.consensus(total[1:].reshape(N, C), float(total[0]), p.eta, Y)
                    change = np.linalg.norm(Z_new - Z) / max(float(np.linalg.norm(Z)), TINY)
                    Z = Z_new
            federation.advance(f"{self.name} rounds (the consensus settles)", round_,
                               p.max_rounds, "round", final=change <= p.tol)
            if change <= p.tol:
                converged = True
                break
        scores, steps = self._test_phase(federation, backend, clients, views, test, state)
        metrics: dict[str, Any] = classification_metrics(test.y, scores)
        metrics.update(rounds=rounds, converged=converged, test_steps=steps)
        values = {f"W/{view}": state[c.name]["W"] for c, view in zip(clients, views, strict=True)}
        values["test_scores"] = scores
        for client in clients:
            client.private["W"] = state[client.name]["W"]
        # the evaluator's model: the clients' final weights, scored as the test phase does
        model = multiview_model(list(views.values()), [state[c.name]["W"] for c in clients],
                                zeta, p.test_tol, p.max_test_steps)
        return Outcome(metrics=metrics, values=values, model=model)

    def _clients(self, federation: Federation, views: dict[str, np.ndarray]) -> list[Party]:
        clients = federation.data_parties()
        held = [tuple(cell.columns) for c in clients
                for cell in c.held_shard().cells]
        expected = [tuple(cols) for cols in views.values()]
        if held != expected:
            raise ValidationError(
                f"v-fedmv needs one client per view ({', '.join(views)}), in order; the "
                "partition gives other column sets. Use --partition vertical:by=groups."
            )
        return clients

    def _test_phase(self, federation: Federation, backend: MaskingBackend,
                    clients: list[Party], views: dict[str, np.ndarray], test: Dataset,
                    state: dict[str, dict[str, np.ndarray]]) -> tuple[np.ndarray, int]:
        """Each client's ``X_k^test W_k``; alternate the averaging steps until ``Z^test``
        settles."""
        p = self.params
        net = federation.network
        names = [c.name for c in clients]
        M, C = test.n_samples, len(test.class_names)
        images, estimates = {}, {}
        for client, cols in zip(clients, views.values(), strict=True):
            with net.compute(client.name):
                test_rows = test.X[:, cols]  # client k holds view k of the test rows
                client.private[tags.TEST_ROWS] = test_rows
                images[client.name] = test_rows @ state[client.name]["W"]
                estimates[client.name] = images[client.name]
        Z = np.zeros((M, C))
        for step in range(p.max_test_steps + 1):  # step 0 averages the images themselves
            with net.stage("test", round=step):
                if step:
                    received = net.broadcast(SERVER, names, tags.TEST_CONSENSUS, Z)
                    for name in names:
                        with net.compute(name):
                            estimates[name] = maths.view_estimate(images[name], received[name],
                                                                  p.zeta)
                vectors = {n: _contribution(p.zeta, estimates[n]) for n in names}
                total = secure_sum(federation, backend, vectors, SERVER,
                                   tag=tags.TEST_ESTIMATE,
                                   meta={tags.SHAPE: [M, C], tags.PHASE_STEP: step})
                with net.compute(SERVER):
                    Z_new = maths.consensus(total[1:].reshape(M, C), float(total[0]), 0.0, None)
                    change = np.linalg.norm(Z_new - Z) / max(float(np.linalg.norm(Z)), TINY)
                Z = Z_new
                if step and change <= p.test_tol:
                    return Z, step
        return Z, p.max_test_steps

def _contribution(zeta: float, Zk: np.ndarray) -> np.ndarray:
    """``[zeta_k, zeta_k Z_k]``, flattened: what the server needs summed over views."""
    return np.concatenate([[zeta], (zeta * Zk).ravel()])
