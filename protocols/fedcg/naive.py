"""FedCG naive: cell owners send kernel blocks to the server, which solves by CG.

Damiani, Rodina, Decherchi, "A Hybrid Federated Kernel Regularized Least
Squares Algorithm" (2024), section 2.2. Each cell owner computes the kernel
block between its features and the landmarks' same features and sends it to
the server; hospitals send their labels protected by the backend
(``masked_send``: under ``noise`` a mask only the server can regenerate);
the server multiplies the blocks of each cohort element-wise, stacks the
cohorts, and runs CenCG's conjugate gradient. One round. The kernel blocks
travel in the clear: the paper's assumption is that distances cannot be
recovered from them, which the attacks test.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fedsec.backends.primitives import masked_send
from fedsec.interfaces import Defense, MaskingBackend
from fedsec.outcomes import Outcome
from fedsec.protocols.fedcg import krls, tags
from fedsec.protocols.fedcg.cencg import FederatedCG, federated_outcome, solve_kernel
from fedsec.protocols.fedcg.setup import (
    SERVER,
    FedCGParams,
    cell_index,
    cohort_block,
    cohort_chain,
    cohort_labels,
    federated_setup,
)
from fedsec.registry import register

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation



@register("protocol", "fedcg-naive")
class FedCGNaive(FederatedCG):
    """Hybrid federated RRLS: cell owners send kernel blocks, the server solves by CG.

    Kernel blocks to the server in one round; labels protected by the backend.
    """

    exposes = frozenset({tags.KERNEL_BLOCK, tags.MASKED_LABELS, tags.LANDMARK_FEATURES, tags.MODEL})

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        params: FedCGParams = self.params
        n_classes = federation.test_set().n_classes
        shared = federated_setup(federation, backend, params, n_classes)
        net = federation.network
        cohort_kernels: dict[int, np.ndarray] = {}
        labels: list[np.ndarray] = []
        with net.stage("upload", round=0):
            for h in range(federation.the_partition().n_cohorts):
                received = []
                for owner, group in cohort_chain(federation, h):
                    with net.compute(owner):
                        block = cohort_block(federation, shared, owner, h, group)
                    meta = {tags.COHORT: h, tags.GROUP: group,
                            tags.CELL: cell_index(federation, owner, h, group),
                            tags.COLUMNS: federation.the_partition().column_groups[group].tolist(),
                            tags.N_FEATURES: federation.test_set().n_features,
                            tags.GAMMA: shared.base_gamma, "gamma_jitter": params.gamma_jitter,
                            "landmark_method": params.landmark_method,
                            "n_landmarks": params.n_landmarks}
                    received.append(net.send(owner, SERVER, tags.KERNEL_BLOCK, block, meta=meta))
                with net.compute(SERVER):
                    cohort_kernels[h] = krls.hadamard(received)
                owner, Y = cohort_labels(federation, h, n_classes)
                labels.append(masked_send(federation, backend, owner, SERVER, Y,
                                          tag=tags.MASKED_LABELS, meta={tags.COHORT: h}))
        with net.stage("solve", round=0), net.compute(SERVER):
            K = np.vstack([cohort_kernels[h] for h in sorted(cohort_kernels)])
            label = f"{self.name} CG"
            result = solve_kernel(params, shared.alpha0, K, np.vstack(labels),
                                  on_epoch=lambda epoch: federation.advance(
                                      label, epoch, params.max_epochs, "epoch"))
        return federated_outcome(federation, label, params, shared, result, cohort_kernels,
                                 model_round=0)
