"""H-FedMV (Algorithm 3): each client holds every view of its own samples.

Each round the server broadcasts the views' weights ``{W_k}``; each client runs MVL on its
own rows from them (``local_rounds`` rounds of block updates, from ``Z_k = X_k W_k``) and
returns ``{W_k^l}``; the server averages them with weights ``N_l / N``. The average is a
weighted secure sum: each client's ``[N_l, N_l W^l]`` goes through the backend's sum, so
under ``noise``, ``paillier`` or ``ckks`` the server sees only the total; the broadcast
weights cannot be protected (every client needs them in the clear). The paper runs 20 rounds.

The result is not the centralized MVL on pooled rows: the run's comparison with ``mvl``
reports the gap, it does not require agreement. The objective is jointly convex, so a local
loop run to convergence ends at the client's own optimum whatever the server broadcast:
``local_change`` measures it (the largest relative change of any client's local weights
between the last two rounds; ~0 means the rounds after the first change nothing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from fedsec.backends.primitives import secure_sum
from fedsec.declare import Int
from fedsec.interfaces import Defense, MaskingBackend
from fedsec.outcomes import Outcome
from fedsec.protocols.fedmv import maths, tags
from fedsec.protocols.fedmv.model import MultiViewModel, consensus_head
from fedsec.protocols.fedmv.setup import (
    SERVER,
    FederatedMVL,
    MVLParams,
    classification_metrics,
    initial_weights,
    labelled_clients,
    view_columns,
)
from fedsec.registry import register

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation


@dataclass(frozen=True, kw_only=True)
class HFedMVParams(MVLParams):
    """MVL's parameters, plus ``rounds`` (server rounds; the paper: 20) and ``local_rounds``
    (each client's block-update rounds per server round; 0: MVL's ``max_rounds``, i.e. run
    to the local tolerance)."""

    rounds: Annotated[int, Int(min=1)] = 20
    """Server rounds: broadcast the weights, each client runs MVL on its rows, weighted secure
    average (the paper: 20)."""
    local_rounds: Annotated[int, Int(min=0)] = 0
    """Each client's rounds of block updates per server round; 0: up to max_rounds, i.e. run to the
    local tolerance."""


@register("protocol", "h-fedmv")
class HFedMV(FederatedMVL):
    """Horizontal federated MVL: clients fit MVL locally from the broadcast weights; the server
    averages them (a weighted secure sum).

    Horizontal federated multi-view learning: clients hold all views of their own rows.
    """

    partition_kinds = ("horizontal",)
    default_partition = "horizontal:parties=4"
    exposes = frozenset({tags.GLOBAL_WEIGHTS, tags.LOCAL_WEIGHTS})
    Params = HFedMVParams

    def agreement_rtol(self, backend: MaskingBackend) -> float:
        """No agreement is claimed: averaging local optima is not the pooled optimum."""
        return float("inf")

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        p = self.params
        test, clients = labelled_clients(federation, self.name)
        views = view_columns(test.feature_groups)
        data = {c.name: ([c.held_shard().X[:, cols] for cols in views.values()],
                         np.asarray(c.held_shard().y)) for c in clients}
        test_views = [test.X[:, cols] for cols in views.values()]
        outcome = fit_rounds(federation, backend, p, data, list(views), test_views, test.y,
                             len(test.class_names))
        model = MultiViewModel(columns=tuple(views.values()), head=outcome.model)
        return dataclasses.replace(outcome, model=model)


def fit_rounds(federation: Federation, backend: MaskingBackend, p: HFedMVParams,
               data: dict[str, tuple[list[np.ndarray], np.ndarray]], views: list[str],
               test_views: list[np.ndarray], test_y: np.ndarray, C: int,
               *, what: str = "h-fedmv") -> Outcome:
    """Algorithm 3 on the clients' views ``data`` (name → (view matrices, labels)): the
    rounds, the test evaluation, each client's local MVL as a baseline.

    The outcome's model is the :class:`.model.ConsensusHead` over the views as given (the
    caller wraps it in a model that reads the dataset's columns)."""
    net = federation.network
    clients = [federation.party(name) for name in data]
    names = list(data)
    shapes = [(X.shape[1], C) for X in test_views]
    settings = p.settings
    if p.local_rounds:
        settings = maths.Settings(tol=p.tol, max_rounds=p.local_rounds,
                                  inner_tol=p.inner_tol, max_inner=p.max_inner, eps=p.eps)
    zetas = [p.zeta] * len(views)
    Ws = [initial_weights(federation.secret_seed, v, d, C) for v, (d, _) in zip(views, shapes,
                                                                        strict=True)]
    meta = {tags.VIEWS: list(views), tags.SHAPES: [list(s) for s in shapes]}
    previous: dict[str, np.ndarray] = {}
    first: dict[str, np.ndarray] = {}  # each client's fit from the initial broadcast
    local_change = float("nan")
    for round_ in range(1, p.rounds + 1):
        with net.stage("train", round=round_):
            received = net.broadcast(SERVER, names, tags.GLOBAL_WEIGHTS, flatten_weights(Ws),
                                     meta=meta)
            vectors, changes = {}, []
            for client in clients:
                with net.compute(client.name):
                    flat = local_fit(*data[client.name], received[client.name], shapes,
                                      C, p, zetas, settings)
                    if client.name in previous:
                        changes.append(float(np.linalg.norm(flat - previous[client.name])
                                             / max(np.linalg.norm(previous[client.name]),
                                                   maths.TINY)))
                    previous[client.name] = flat
                    first.setdefault(client.name, flat)
                    n_rows = float(len(data[client.name][1]))
                    vectors[client.name] = np.concatenate([[n_rows], n_rows * flat])
            total = secure_sum(federation, backend, vectors, SERVER, tag=tags.LOCAL_WEIGHTS,
                               meta=meta)
            with net.compute(SERVER):
                Ws = unflatten_weights(total[1:] / total[0], shapes)
            local_change = max(changes) if changes else float("nan")
        federation.advance(f"{what} rounds", round_, p.rounds, "round")
    for client in clients:
        client.private[tags.FINAL_LOCAL_WEIGHTS] = previous[client.name]
    head = consensus_head(Ws, p.zeta, p.test_tol, p.max_test_steps)
    scores = head.scores(test_views)
    metrics: dict[str, Any] = classification_metrics(test_y, scores)
    # each client's MVL on its own rows alone (the paper's "local MVL" baseline)
    local = [classification_metrics(test_y, maths.predict(
        test_views, unflatten_weights(first[c.name], shapes), zetas, tol=p.test_tol,
        max_iter=p.max_test_steps)) for c in clients]
    metrics.update({f"local_{k}": float(np.mean([m[k] for m in local]))
                    for k in ("accuracy", "f1")})
    metrics.update(rounds=p.rounds, local_change=local_change, clients=len(clients))
    values = {f"W/{view}": W for view, W in zip(views, Ws, strict=True)}
    values["test_scores"] = scores
    return Outcome(metrics=metrics, values=values, model=head)


def local_fit(Xs: list[np.ndarray], y: np.ndarray, flat: np.ndarray,
               shapes: list[tuple[int, int]], n_classes: int, p: MVLParams,
               zetas: list[float], settings: maths.Settings) -> np.ndarray:
    """One client's MVL on its rows from the broadcast weights; its weights, flattened."""
    Y = maths.one_hot(y, n_classes)
    Ws = unflatten_weights(flat, shapes)
    Zs = [X @ W for X, W in zip(Xs, Ws, strict=True)]
    Z = maths.consensus(sum(z * Zk for z, Zk in zip(zetas, Zs, strict=True)), float(sum(zetas)),
                        p.eta, Y)
    fit = maths.fit_mvl(Xs, Y, betas=[p.beta] * len(Xs), zetas=zetas, eta=p.eta, Ws=Ws, Zs=Zs,
                        Z=Z, settings=settings)
    return flatten_weights(fit.Ws)


def flatten_weights(Ws: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.asarray(W).ravel() for W in Ws])


def unflatten_weights(flat: np.ndarray, shapes: Sequence[tuple[int, int]]) -> list[np.ndarray]:
    out, start = [], 0
    for rows, cols in shapes:
        out.append(np.asarray(flat[start:start + rows * cols]).reshape(rows, cols).copy())
        start += rows * cols
    return out
