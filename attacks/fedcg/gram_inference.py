"""Linear inference: secrets that enter observed messages linearly with known coefficients.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data" (Definition 6: enough equations ``o = w^T x``
with known ``w`` determine ``x``), applied to FedCG secure (Damiani, Rodina,
Decherchi 2024, Algorithm 1) as the project's SEEDS.md reads it: at every
CG epoch the server broadcasts a direction ``p_t`` and receives
``K_h^T K_h p_t + (lambda / N_h) p_t`` per contribution; the pairs determine
the m×m Gram matrix ``K_h^T K_h`` once m independent directions have passed
(fewer give its restriction to the Krylov subspace spanned). Under a masking
backend the server still learns the sum over cohorts, hence ``K^T K``.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import Annotated

import numpy as np

from fedsec.attacks.linear_systems import LinearSystem, register_extractor, solve_linear_map
from fedsec.backends.api import RESULT_TAG as REVEAL_RESULT
from fedsec.backends.fixed_point import decode_z64
from fedsec.backends.mask_terms import merge_terms
from fedsec.declare import Declared, Float
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import truth_key
from fedsec.protocols.fedcg import tags
from fedsec.protocols.fedcg.setup import gram_path
from fedsec.registry import register
from fedsec.views import View

PAPER = ("Gu, Dang, Li, Huang, Federated Doubly Stochastic Kernel Learning for Vertically "
         "Partitioned Data (Definition 6); applied to Damiani et al. 2024, Algorithm 1")


Contributors = tuple[str, ...]


def epoch_pairs(view: View) -> tuple[dict[int, np.ndarray],
                                     dict[Contributors, dict[int, np.ndarray]],
                                     dict[Contributors, list[int]], int]:
    """Directions per epoch and the matching Gram products per contributor (or their sum)."""
    directions: dict[int, np.ndarray] = {}
    for m in view.select(tag=tags.CG_DIRECTION):
        if view.can_open(m):
            directions.setdefault(int(m.meta[tags.EPOCH]), np.asarray(view.open(m)))
    products: dict[tuple[str, ...], dict[int, np.ndarray]] = defaultdict(dict)
    covered: dict[tuple[str, ...], list[int]] = {}
    n_cohorts = 0
    by_epoch: dict[int, list] = defaultdict(list)
    for m in view.select(tag=tags.GRAM_PRODUCT):
        by_epoch[int(m.meta[tags.EPOCH])].append(m)
    for epoch, messages in by_epoch.items():
        cohorts = messages[0].meta[tags.COHORTS]
        n_cohorts = int(messages[0].meta[tags.N_COHORTS])
        shape = directions[epoch].shape if epoch in directions else None
        if shape is None:
            continue
        if all(view.can_open(m) for m in messages):
            for m in messages:
                products[(m.sender,)][epoch] = np.asarray(view.open(m), dtype=float).reshape(shape)
                covered[(m.sender,)] = cohorts[m.sender]
            continue
        total = _summed(view, messages)
        if total is not None:  # the server opens the sum it is meant to learn
            key = tuple(sorted(m.sender for m in messages))
            products[key][epoch] = total.reshape(shape)
            covered[key] = sorted(h for s in key for h in cohorts[s])
    return directions, dict(products), covered, n_cohorts


def gram_key(cohorts: list[int], n_cohorts: int) -> str | None:
    """The ground-truth key of the Gram matrix a set of cohorts' products determines.

    Every cohort: the total ``K^T K``; one cohort: its own; otherwise None (a partial
    sum the run does not record).
    """
    if len(cohorts) == n_cohorts:
        return truth_key(None, *gram_path(None))
    if len(cohorts) == 1:
        return truth_key(None, *gram_path(cohorts[0]))
    return None


def _summed(view: View, messages: list) -> np.ndarray | None:
    """The aggregate of protected contributions as their receiver obtains it."""
    if all(m.protection == "noise" for m in messages):
        words = np.asarray(np.sum([np.asarray(m.payload, dtype=np.uint64) for m in messages],
                                  axis=0, dtype=np.uint64))
        if merge_terms(*(m.meta["masks"] for m in messages)):
            return None  # masks remain: some contributions are missing from the view
        return decode_z64(words, messages[0].meta["fraction_bits"])
    receiver = messages[0].receiver
    later = [m for m in view.select(tag=REVEAL_RESULT, receiver=receiver)
             if m.seq > messages[-1].seq]
    if later and view.can_open(later[0]):
        return np.asarray(view.open(later[0]), dtype=float)
    return None


@register("attack", "gram-inference")
class GramInference(Attack):
    """Solve the linear system the CG epochs' (direction, Gram product) pairs form: per-cohort Gram
    matrices under plain, their sum under a masking backend.

    Recover Gram matrices ``K_h^T K_h`` from the server's (direction, product) pairs.
    """

    paper = PAPER
    needs_tags = frozenset({tags.CG_DIRECTION, tags.GRAM_PRODUCT})
    closed_form = True  # one least-squares solve per contributor

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        rcond: Annotated[float, Float(min=0.0)] = 1e-10
        """Relative cutoff of small singular values in the least-squares solve for the Gram matrix
        (numpy lstsq's rcond)."""

    def run(self, view: View) -> Reconstruction:
        directions, products, covered, n_cohorts = epoch_pairs(view)
        lam = float(view.header.get("protocol", {}).get("params", {}).get("regularization", 0.0))
        estimates, baseline, ranks = {}, {}, {}
        for contributors, by_epoch in products.items():
            epochs = sorted(by_epoch)
            P = np.hstack([directions[e] for e in epochs])
            Q = np.hstack([by_epoch[e] for e in epochs])
            M, rank = solve_linear_map(P, Q, rcond=self.params.rcond)
            cohorts = covered[contributors]
            gram = M - lam * len(cohorts) / max(n_cohorts, 1) * np.eye(M.shape[0])
            key = gram_key(cohorts, n_cohorts)
            if key is None:
                continue
            estimates[key] = 0.5 * (gram + gram.T)
            baseline[key] = np.zeros_like(gram)
            ranks[key] = {"contributors": list(contributors), "epochs": len(epochs),
                          "rank": rank, "size": M.shape[0]}
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info={"targets": ranks})


@register_extractor("fedcg-secure", frozenset({tags.CG_DIRECTION, tags.GRAM_PRODUCT}))
def fedcg_systems(view: View) -> list[LinearSystem]:
    """Gram rows ``G[r] . p_t = (K^T K p_t)[r]`` from the server's direction/product pairs."""
    directions, products, covered, n_cohorts = epoch_pairs(view)
    lam = float(view.header.get("protocol", {}).get("params", {}).get("regularization", 0.0))
    out = []
    for contributors, by_epoch in products.items():
        cohorts = covered[contributors]
        key = gram_key(cohorts, n_cohorts)
        if key is None:
            continue
        epochs = sorted(by_epoch)
        P = np.hstack([directions[e] for e in epochs])  # m × (epochs · columns)
        Q = np.hstack([by_epoch[e] for e in epochs])
        m = P.shape[0]
        Q = Q - lam * len(cohorts) / max(n_cohorts, 1) * P
        rows = np.repeat(np.arange(m), P.shape[1])
        cols = np.tile(np.arange(P.shape[1]), m)
        out.append(LinearSystem(
            label=f"fedcg gram {key}", parts=((key, 0, m),), n_rows=m, n_unknowns=m,
            rows=rows, values=Q[rows, cols], variance=np.zeros(rows.size),
            order=cols.copy(),
            coefficients=functools.partial(_coefficients, P, cols), min_norm=True,
            symmetric=True,
            info={"contributors": list(contributors)}))
    return out


def _coefficients(P: np.ndarray, cols: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The rows of a Gram system's coefficient matrix for the observations ``idx``."""
    return np.asarray(P[:, cols[idx]].T)
