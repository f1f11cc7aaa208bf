"""EDM completion on a leaked kernel block: the FedCG paper's own security analysis.

Damiani, Rodina, Decherchi, "A Hybrid Federated Kernel Regularized Least
Squares Algorithm" (2024), section 4: from a kernel block the attacker takes
``D_XW = -log(K) / gamma``, builds ``D = [[D_X, D_XW], [D_XW^T, D_W]]`` with
the private block ``D_X`` hidden, completes it (Alternating Descent, Rank
Alternation, SDR, OptSpace, Soft-Impute; see :mod:`fedsec.geometry.completion`)
and reads points off the completed ``D_X`` by classical MDS. The Nyström /
Schur-complement formula ``D_X = f(D_XW, D_W)`` is offered too: it is exact
once the landmarks affinely span the feature space, which makes completion
the weaker attack (the project's SEEDS.md).

``D_W`` comes from the clients' seed (U and N landmarks) or from the block
itself (P landmarks are rows with kernel value 1); without either it stays
hidden as well.

Every block's completion reports how it ended (:mod:`fedsec.convergence`): the completers'
objective histories and stop reasons, combined over the blocks into
``info["convergence"]``; the Nyström formula is a closed form. With ``method = "sdr"`` the
solver is chosen by size unless named (:func:`~fedsec.geometry.completers.sdr.choose_solver`:
SCS up to 350 points, the low-rank solver above), and ``info["sdr_solver"]`` names it per
block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.fedcg.family import KernelBlockAttack
from fedsec.attacks.fedcg.multilateration import (
    kernel_distances,
    landmark_rows,
    observed_blocks,
    public_gamma,
    seeded_landmarks,
)
from fedsec.convergence import CLOSED_FORM, Convergence, combine
from fedsec.declare import Choice, Declared, Int, owner_of
from fedsec.errors import CapabilityError
from fedsec.geometry.completers.sdr import AUTO as SDR_AUTO
from fedsec.geometry.completers.sdr import SOLVERS as SDR_SOLVERS
from fedsec.geometry.completers.sdr import choose_solver
from fedsec.geometry.completion import METHODS, complete
from fedsec.geometry.edm import assemble_edm, classical_mds, edm, nystrom_completion
from fedsec.interfaces import AttackSeed
from fedsec.outcomes import Reconstruction
from fedsec.private_store import shard_key
from fedsec.registry import register
from fedsec.seeding import generator
from fedsec.validation import param_error
from fedsec.views import View

ALL_METHODS = (*METHODS, "nystrom")


def complete_hidden_block(D_XW: np.ndarray, D_W: np.ndarray | None, dim: int, method: str, *,
                          rng: np.random.Generator, max_iter: int,
                          on_iteration: Callable[[int], None] | None = None,
                          options: Mapping[str, Any] | None = None,
                          on_convergence: Callable[[Convergence], None] | None = None,
                          ) -> np.ndarray:
    """The completed ``D_X`` (n×n) from cross distances and, when known, landmark distances;
    ``on_iteration(iteration)`` follows the completion, ``options`` are the method's own
    keywords (for example ``{"solver": "SCS"}`` for ``"sdr"``), ``on_convergence`` receives
    how the completion ended (the closed form's record for the Nyström formula)."""
    n = D_XW.shape[0]
    if method == "nystrom":
        if D_W is None:
            raise CapabilityError(
                "The Nyström formula needs the landmark distances D_W, which the adversary "
                "knows only from the clients' seed (U and N landmarks) or from P landmarks "
                "located in the block (every landmark a row of it); here it has neither: use "
                "a completion method, which treats D_W as unknown.")
        if on_convergence is not None:
            on_convergence(CLOSED_FORM)
        return nystrom_completion(np.nan_to_num(D_XW, nan=np.nanmean(D_XW)), D_W, dim)
    D, mask = assemble_edm(None, D_XW, D_W)  # NaN (underflowed) entries and D_W=None: unknown
    progress = None if on_iteration is None else (lambda it, _value: on_iteration(int(it)))
    full = complete(D, mask, dim, method, rng=rng, max_iter=max_iter, progress=progress,
                    on_convergence=on_convergence, **dict(options or {}))
    return full[:n, :n]


@register("attack", "edm-completion")
class EDMCompletion(KernelBlockAttack):
    """Complete [[D_X, D_XW], [D_XW^T, D_W]] with D_X hidden (the paper's section-4 algorithms or
    the Nyström formula), then classical MDS.

    Complete the hidden distance block of each leaked kernel block, then MDS.
    """

    budget_params = ("max_iter",)

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        method: Annotated[str, Choice(*ALL_METHODS)] = "alternating-descent"
        """How the hidden block D_X is filled: a completion algorithm of the paper's section 4 or
        the nystrom (Schur-complement) formula, which needs D_W."""
        max_iter: Annotated[int, Int(min=1)] = 200
        """Iterations at most of the completion algorithm."""
        seed: AttackSeed = None
        """Seed of the attack's own random stream (the completion's random starts); None: the
        run's public seed (0 when unknown)."""
        sdr_solver: Annotated[str | None, Choice(*SDR_SOLVERS)] = None
        """Solver of method 'sdr': auto (None: SCS up to 350 points, burer-monteiro above), SCS
        or CLARABEL (the misfit form), or burer-monteiro (the equality-constrained form in
        low-rank form, thousands of points in seconds)."""

        def __post_init__(self) -> None:
            if self.sdr_solver is not None and self.method != "sdr":
                raise param_error(owner_of(self), "sdr_solver", "None unless method is 'sdr'",
                                  self.sdr_solver)

    def run(self, view: View) -> Reconstruction:
        gamma = public_gamma(view)
        blocks = [b for b in observed_blocks(view) if len(b.cells) == 1
                  and b.cells[0][0] not in view.knowledge]
        n_features = max((b.n_features for b in blocks), default=0)
        seeded = seeded_landmarks(view, n_features, gamma) if gamma is not None else None
        rng = generator(self.seed_for(view), f"attack/{self.name}")
        estimates, baseline, known_dw = {}, {}, {}
        records: list[Convergence] = []
        solvers: dict[str, str] = {}
        for number, block in enumerate(blocks, start=1):
            owner, cell, cols = block.cells[0]
            label = f"{self.name} block {number} of {len(blocks)}"
            widths = seeded[1] if seeded is not None else gamma
            assert widths is not None  # a kernel block announces the base width (public_gamma)
            D_XW = kernel_distances(block.K, widths)
            D_W = self._landmark_distances(D_XW, seeded, list(cols))
            reached = [0]  # the last iteration reported (a completer may stop early)

            def follow(iteration: int, label: str = label, reached: list[int] = reached) -> None:
                reached[0] = iteration
                self.report_progress(iteration, self.params.max_iter, "iteration", label=label)

            options = ({} if self.params.sdr_solver is None
                       else {"solver": self.params.sdr_solver})
            D_X = complete_hidden_block(D_XW, D_W, len(cols), self.params.method, rng=rng,
                                        max_iter=self.params.max_iter, on_iteration=follow,
                                        options=options, on_convergence=records.append)
            self.report_progress(reached[0], self.params.max_iter, "iteration", label=label,
                                 final=True)
            key = shard_key(owner, cell, "X")
            estimates[key] = classical_mds(D_X, len(cols))
            baseline[key] = np.zeros((block.K.shape[0], len(cols)))
            known_dw[key] = D_W is not None
            if self.params.method == "sdr":
                named = self.params.sdr_solver or SDR_AUTO
                solvers[key] = (choose_solver(sum(D_XW.shape)) if named == SDR_AUTO
                                else named)
        info: dict[str, Any] = {"method": self.params.method, "blocks": len(blocks),
                                "landmark_distances_known": known_dw,
                                "convergence": combine(records).to_info()}
        if solvers:
            info["sdr_solver"] = solvers
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info=info)

    @staticmethod
    def _landmark_distances(D_XW: np.ndarray, seeded: tuple | None,
                            cols: list[int]) -> np.ndarray | None:
        if seeded is not None:
            return edm(seeded[0][:, cols])
        rows = landmark_rows(D_XW)
        if len(rows) == D_XW.shape[1]:
            D_W = D_XW[[rows[j] for j in range(D_XW.shape[1])]]
            return 0.5 * (D_W + D_W.T)
        return None
