"""FedCG secure: conjugate gradient where the server never receives a kernel block.

Damiani, Rodina, Decherchi, "A Hybrid Federated Kernel Regularized Least
Squares Algorithm" (2024), Algorithms 1–2 (section 2.3). Per cohort, the cell
owners chain the Hadamard product: the first multiplies its kernel block by
the current scaling (``alpha0`` at initialisation, the CG direction at each
epoch), each next owner multiplies in its own block, and the label owner
(last) obtains ``K_h s``; a backward chain through the transposed blocks
gives ``K_h^T v``. At initialisation the label owner sends the residual
masked with noise from the clients' seed and a second backward pass removes
it; at each epoch the cohort returns ``K_h^T K_h p + (lambda / N_h) p``. The
server sums over cohorts with the masking backend's ``secure_sum`` and
updates alpha, r, p exactly as CG does, then broadcasts the next direction.

The direction is broadcast with unit column norms and the server rescales the
aggregate: the same arithmetic, but fixed-point masks keep a constant
relative precision as CG converges.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.backends.primitives import secure_sum
from fedsec.interfaces import Defense, MaskingBackend
from fedsec.outcomes import Outcome
from fedsec.protocols.fedcg import krls, tags
from fedsec.protocols.fedcg.cencg import FederatedCG, absolute_tol, federated_outcome
from fedsec.protocols.fedcg.setup import (
    SERVER,
    FedCGParams,
    Shared,
    cell_index,
    cohort_block,
    cohort_chain,
    cohort_labels,
    federated_setup,
)
from fedsec.registry import register

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation



class _Chains:
    """The cohorts' chains of cell owners and the blocks each owner computed."""

    def __init__(self, federation: Federation, shared: Shared) -> None:
        self.federation = federation
        self.net = federation.network
        self.chains = {h: cohort_chain(federation, h)
                       for h in range(federation.the_partition().n_cohorts)}
        self.columns = [c.tolist() for c in federation.the_partition().column_groups]
        self.n_features = federation.test_set().n_features
        self.blocks: dict[tuple[str, int, int], np.ndarray] = {}
        for h, chain in self.chains.items():
            for owner, g in chain:
                with self.net.compute(owner):
                    self.blocks[(owner, h, g)] = cohort_block(federation, shared, owner, h, g)

    def forward(self, h: int, scaling: np.ndarray, meta: dict[str, Any]) -> np.ndarray:
        """``K_h S`` at the label owner, via the chained Hadamard product scaled by ``S``."""
        chain = self.chains[h]
        product: np.ndarray | None = None
        covered: list[list[Any]] = []  # (owner, cell, columns) of the blocks multiplied in so far
        for i, (owner, g) in enumerate(chain):
            with self.net.compute(owner):
                block = self.blocks[(owner, h, g)]
                product = (block[:, :, None] * scaling[None, :, :] if product is None
                           else product * block[:, :, None])
            covered.append([owner, cell_index(self.federation, owner, h, g), self.columns[g]])
            if i + 1 < len(chain):
                product = self.net.send(owner, chain[i + 1][0], tags.CHAIN_PRODUCT, product,
                                        meta={**meta, tags.COHORT: h, tags.POSITION: i,
                                              tags.GROUP: g, tags.CELL: covered[-1][1],
                                              tags.COLUMNS: self.columns[g],
                                              tags.COVERS: [list(c) for c in covered],
                                              tags.N_FEATURES: self.n_features})
        assert product is not None  # a chain holds at least one block
        with self.net.compute(chain[-1][0]):
            return product.sum(axis=1)

    def backward(self, h: int, vector: np.ndarray, meta: dict[str, Any]) -> tuple[str, np.ndarray]:
        """``K_h^T V`` at the chain's first owner, via the transposed blocks in reverse."""
        chain = self.chains[h][::-1]
        product: np.ndarray | None = None
        for i, (owner, g) in enumerate(chain):
            with self.net.compute(owner):
                block = self.blocks[(owner, h, g)].T
                product = (block[:, :, None] * vector[None, :, :] if product is None
                           else product * block[:, :, None])
            if i + 1 < len(chain):
                product = self.net.send(owner, chain[i + 1][0], tags.CHAIN_TRANSPOSE, product,
                                        meta={**meta, tags.COHORT: h, tags.POSITION: i,
                                              tags.GROUP: g})
        assert product is not None  # a chain holds at least one block
        head = chain[-1][0]
        with self.net.compute(head):
            return head, product.sum(axis=1)


def _aggregate(federation: Federation, backend: MaskingBackend,
               parts: dict[int, tuple[str, np.ndarray]], tag: str,
               meta: dict[str, Any]) -> np.ndarray:
    """Sum per-cohort m×c values at the server (a party heading several chains adds its own)."""
    per_party: dict[str, np.ndarray] = {}
    cohorts: dict[str, list[int]] = {}
    for h, (party, value) in sorted(parts.items()):
        per_party[party] = per_party.get(party, 0.0) + value
        cohorts.setdefault(party, []).append(h)
    meta = {**meta, tags.COHORTS: cohorts, tags.N_COHORTS: len(parts)}
    shape = next(iter(per_party.values())).shape
    if len(per_party) >= 2:
        flat = {p: v.ravel() for p, v in per_party.items()}
        return secure_sum(federation, backend, flat, SERVER, tag=tag, meta=meta).reshape(shape)
    (party, value), = per_party.items()  # one contributor: its value is the aggregate
    return np.asarray(federation.network.send(party, SERVER, tag, value, meta=meta))


@register("protocol", "fedcg-secure")
class FedCGSecure(FederatedCG):
    """Hybrid federated RRLS by CG; kernel blocks never leave their owners.

    Chained Hadamard products per cohort; the server sees only aggregates and directions.
    """

    exposes = frozenset({tags.CHAIN_PRODUCT, tags.CHAIN_TRANSPOSE, tags.CG_DIRECTION,
                         tags.MASKED_RESIDUAL_GRADIENT, tags.NOISE_GRADIENT, tags.GRAM_PRODUCT,
                         tags.LANDMARK_FEATURES, tags.MODEL})

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        params: FedCGParams = self.params
        n_classes = federation.test_set().n_classes
        shared = federated_setup(federation, backend, params, n_classes)
        net = federation.network
        chains = _Chains(federation, shared)
        cohorts = sorted(chains.chains)
        clients = federation.the_partition().data_parties
        lam = params.regularization
        share = lam / len(cohorts)

        with net.stage("init", round=0):
            noisy, noise = {}, {}
            for h in cohorts:
                owner, Y = cohort_labels(federation, h, n_classes)
                fitted = chains.forward(h, shared.alpha0, {tags.SCALING: "alpha0"})
                eta = shared.rng.normal(0.0, 1.0, size=Y.shape)  # label noise, clients' seed
                with net.compute(owner):
                    residual = fitted - Y + eta
                noisy[h] = chains.backward(h, residual, {"vector": "masked_residual"})
                noise[h] = chains.backward(h, eta, {"vector": "noise"})
            gradient = (_aggregate(federation, backend, noisy, tags.MASKED_RESIDUAL_GRADIENT, {})
                        - _aggregate(federation, backend, noise, tags.NOISE_GRADIENT, {}))
            with net.compute(SERVER):
                residual0 = -(gradient + lam * shared.alpha0)

        def apply_A(P: np.ndarray, epoch: int) -> np.ndarray:
            norms = np.linalg.norm(P, axis=0)
            norms[norms == 0] = 1.0
            with net.stage("epoch", round=epoch):
                unit = net.broadcast(SERVER, clients, tags.CG_DIRECTION, P / norms,
                                     meta={tags.EPOCH: epoch})[clients[0]]
                parts = {}
                for h in cohorts:
                    fitted = chains.forward(h, unit, {tags.SCALING: tags.SCALED_BY_DIRECTION,
                                                      tags.EPOCH: epoch})
                    head, value = chains.backward(h, fitted, {"vector": "K p", tags.EPOCH: epoch})
                    with net.compute(head):
                        parts[h] = (head, value + share * unit)
                total = _aggregate(federation, backend, parts, tags.GRAM_PRODUCT,
                                   {tags.EPOCH: epoch})
                return total * norms

        with net.compute(SERVER):
            tol = absolute_tol(params, residual0)
        label = f"{self.name} CG"
        result = krls.conjugate_gradient(
            apply_A, residual0, shared.alpha0, tol=tol, max_epochs=params.max_epochs,
            on_epoch=lambda epoch, _a, _p: federation.advance(label, epoch, params.max_epochs,
                                                              "epoch"))
        kernels = {h: krls.hadamard([chains.blocks[(o, h, g)] for o, g in chains.chains[h]])
                   for h in cohorts}
        return federated_outcome(federation, label, params, shared, result, kernels,
                                 model_round=result.epochs + 1)
