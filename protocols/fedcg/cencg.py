"""CenCG: centralized conjugate gradient for random Nyström KRLS (the FedCG reference).

Damiani, Rodina, Decherchi, "A Hybrid Federated Kernel Regularized Least
Squares Algorithm" (2024): CenCG solves ``(K^T K + lambda I) alpha = K^T Y``
by conjugate gradient on one site's pooled data. FedCG naive and secure must
reach the same ``alpha`` from the same landmarks and starting point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from fedsec.interfaces import CentralizedProtocol, MaskingBackend, Protocol
from fedsec.outcomes import Outcome
from fedsec.protocols.fedcg import krls, tags
from fedsec.protocols.fedcg.model import krls_model
from fedsec.protocols.fedcg.setup import (
    SERVER,
    FedCGParams,
    Shared,
    centralized_shared,
    check_landmarks,
    class_code,
    evaluate,
    gram_truth,
)
from fedsec.registry import register

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation

PAPER = ("Damiani, Rodina, Decherchi, A Hybrid Federated Kernel Regularized Least Squares "
         "Algorithm, 2024")


def solve(params: FedCGParams, shared: Shared, X: np.ndarray, Y: np.ndarray,
          ) -> tuple[krls.CGResult, np.ndarray]:
    """CG on the normal equations with all rows at hand; returns the result and ``K``."""
    K = krls.rbf_block(X, shared.W, shared.gamma)
    return solve_kernel(params, shared.alpha0, K, Y), K


def solve_kernel(params: FedCGParams, alpha0: np.ndarray, K: np.ndarray,
                 Y: np.ndarray, on_epoch: Callable[[int], None] | None = None
                 ) -> krls.CGResult:
    """CG on ``(K^T K + lambda I) alpha = K^T Y`` from ``alpha0`` for a kernel at hand;
    ``on_epoch(epoch)`` follows it."""
    lam = params.regularization

    def apply_A(P: np.ndarray, epoch: int) -> np.ndarray:
        return K.T @ (K @ P) + lam * P

    residual0 = K.T @ Y - apply_A(alpha0, 0)
    return krls.conjugate_gradient(
        apply_A, residual0, alpha0, tol=absolute_tol(params, residual0),
        max_epochs=params.max_epochs,
        on_epoch=None if on_epoch is None else lambda epoch, _a, _p: on_epoch(epoch))


def absolute_tol(params: FedCGParams, residual0: np.ndarray) -> float:
    """The stopping threshold on the squared residual, relative to the start."""
    return params.tol * float((residual0 * residual0).sum(axis=0).max())


def reference_outcome(params: FedCGParams, train: Dataset, test: Dataset,
                      seed: int, *, bounds: bool = False) -> Outcome:
    """CenCG on the pooled training set with the run's shared seed; with ``bounds``, and
    when CG converged, its metrics add ``stop_bound_alpha`` and ``stop_bound_test_scores``:
    how far (relative) a solution that met the same stopping rule may lie from this one
    (:func:`~fedsec.protocols.fedcg.krls.stop_bounds`)."""
    class_code(test, params.positive_class)  # refused before the training
    shared = centralized_shared(params, train, seed)
    Y = krls.label_matrix(train.y, train.n_classes)
    result, K = solve(params, shared, train.X, Y)
    out = cg_outcome(params, shared, result, test)
    if not (bounds and result.converged):
        return out
    alpha, scores = krls.stop_bounds(K, params.regularization, Y, shared.alpha0, result.alpha,
                                     params.tol, krls.rbf_block(test.X, shared.W, shared.gamma))
    return replace(out, metrics={**out.metrics, "stop_bound_alpha": alpha,
                                 "stop_bound_test_scores": scores})


def cg_outcome(params: FedCGParams, shared: Shared, result: krls.CGResult, test: Dataset,
               truth: Mapping[str, np.ndarray] | None = None) -> Outcome:
    """The model CG trained, its test metrics (with the epochs and whether CG converged), its
    ``alpha`` and test scores, and any extra ground ``truth``."""
    model = krls_model(shared.W, shared.gamma, result.alpha)
    scores, metrics = evaluate(model, test, params.positive_class)
    metrics.update(epochs=result.epochs, converged=result.converged)
    return Outcome(metrics=metrics, values={"alpha": result.alpha, "test_scores": scores},
                   model=model, truth={} if truth is None else truth)


def federated_outcome(federation: Federation, label: str, params: FedCGParams, shared: Shared,
                      result: krls.CGResult, kernels: Mapping[int, np.ndarray], *,
                      model_round: int) -> Outcome:
    """The end of a federated CG run: its last progress report, the model broadcast to the
    data parties, the outcome with the cohorts' Gram blocks and the landmarks as truth."""
    federation.advance(label, result.epochs, params.max_epochs, "epoch", final=True)
    net = federation.network
    with net.stage("model", round=model_round):
        net.broadcast(SERVER, federation.the_partition().data_parties, tags.MODEL, result.alpha)
    return cg_outcome(params, shared, result, federation.test_set(),
                      {**gram_truth(kernels), "landmarks": shared.W})


@register("protocol", "cencg")
class CenCG(CentralizedProtocol):
    """Centralized conjugate-gradient RRLS (the reference for FedCG).

    Centralized CG: one site holds every row and feature; no message is sent.
    """

    paper = PAPER
    default_dataset = "ionosphere"
    instead = "fedcg-naive/fedcg-secure"
    renamed_tags = tags.RENAMED
    Params = FedCGParams

    def solve(self, train: Dataset, test: Dataset, seed: int) -> Outcome:
        return reference_outcome(self.params, train, test, seed)

    def check_data(self, n_samples: int, n_features: int) -> None:
        check_landmarks(self.params, n_samples)


class FederatedCG(Protocol):
    """What FedCG naive and FedCG secure share: layouts, defaults, parameters, the reference.

    Both must reach CenCG's alpha and test scores: within 1e-8 (relative) under exact
    backends, 1e-4 under CKKS, or within the distance CG's stopping rule leaves between two
    solutions that met it, where that is larger (the reference's ``stop_bound_*`` metrics).
    """

    paper = PAPER
    partition_kinds = ("horizontal", "vertical", "hybrid")
    default_partition = "hybrid:cohorts=2,groups=3"
    default_dataset = "ionosphere"
    coordinators = ((SERVER, "server"),)
    requires = frozenset({"sum"})
    renamed_tags = tags.RENAMED
    Params = FedCGParams

    def agreement_rtol(self, backend: MaskingBackend) -> float:
        return 1e-8 if backend.exact else 1e-4

    def agreement_tolerances(self, backend: MaskingBackend, reference: Outcome
                             ) -> dict[str, float]:
        """``alpha`` and the test scores within :meth:`agreement_rtol` or the distance CG's
        stopping rule allows two solutions, the larger: on the toy set (condition number about
        1e8) a relative residual of 1e-12 leaves them up to 4e-7 to 7e-7 apart, and summing in
        the federation's order moved ``alpha`` by 2e-8 to 4e-8 in 8 of 60 runs."""
        rtol = self.agreement_rtol(backend)
        return {key: max(rtol, float(reference.metrics.get(f"stop_bound_{key}", 0.0)))
                for key in ("alpha", "test_scores")}

    def check_data(self, n_samples: int, n_features: int) -> None:
        check_landmarks(self.params, n_samples)

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        return reference_outcome(self.params, train, test, seed, bounds=True)
