"""Collusion on FDSKL's trees: coalitions that cancel offsets and read partial products exactly.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data", Lemma 8 and its proof: with T1 and T2 totally
different, no worker learns an offset or a partial sum of offsets on a T1
node. Workers that pool what they saw can: a coalition holding a T1 sum over
a set of workers and the T2 sums of the same offsets subtracts them, which
leaves an exact sum of partial dot products ``sum_l (w_j)_{G_l}^T x_{G_l}``, a
linear equation in those workers' features with known coefficients; enough
features (one per iteration) give the features themselves.

The attack reads a coalition's View, keeps the combinations of observed sums
from which every offset cancels (exactly, per call of Algorithm 3), solves
them per sample and reports which workers' features it recovered. Its info
also lists, from the recorded trees alone, what every coalition of up to
``max_size`` workers would recover (:func:`protocols.fdskl_trees.enumerate_coalitions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.fdskl import observations as fo
from fedsec.attacks.fdskl.equations import fdskl_systems
from fedsec.attacks.linear_systems import solve_rows
from fedsec.declare import Declared, Int
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import parse_truth_key
from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.exposure import enumerate_coalitions
from fedsec.registry import register
from fedsec.views import View

PAPER = ("Gu, Dang, Li, Huang, Federated Doubly Stochastic Kernel Learning for Vertically "
         "Partitioned Data (Lemma 8)")


def coalition_table(obs: fo.Observations, max_size: int) -> list[dict[str, Any]]:
    """What each coalition of up to ``max_size`` workers recovers exactly, per requester and l'."""
    out = []
    for requester, plan in sorted(obs.plans.items()):
        for result in enumerate_coalitions(plan, max_size, offsets=obs.mode != "none"):
            out.append({"requester": requester, "coalition": list(result.coalition),
                        "recovers": list(result.workers()),
                        "per_excluded": {k: list(v) for k, v in result.recovered.items()}})
    return out


@register("attack", "tree-collusion")
class TreeCollusion(Attack):
    """Coalitions on FDSKL's trees: combine T1 and T2 sums so the offsets cancel, read exact partial
    dot products, solve for the covered workers' features.

    Exact partial products from sums a coalition can combine so that every offset cancels.
    """

    paper = PAPER
    default_scorer = "feature-recovery"
    needs_tags = frozenset({tags.PARTIAL_DOT, tags.TREE_PLAN})
    closed_form = True

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        max_size: Annotated[int, Int(min=1)] = 2
        """Largest coalition (in workers) listed in the table of what every coalition would recover
        exactly."""

    def unmet(self, view: View) -> str | None:
        return fo.applicable(view)

    def run(self, view: View) -> Reconstruction:
        obs = fo.observe(view)
        estimates: dict[str, np.ndarray] = {}
        baseline: dict[str, np.ndarray] = {}
        recovered: dict[str, int] = {}
        missing: dict[str, list[int]] = {}
        for system in fdskl_systems(view, kinds=("exact",)):
            x, _ = solve_rows(system)
            found = np.isfinite(x).all(axis=1)
            x[~found] = system.baseline
            for key, start, stop in system.parts:
                estimates[key] = x[:, start:stop]
                baseline[key] = np.full_like(estimates[key], system.baseline)
                worker = str(parse_truth_key(key).party)
                recovered[worker] = int(found.sum())
                missing[worker] = np.flatnonzero(~found)[:1000].tolist()
        members = list(obs.coalition)
        predicted = sorted({w for row in coalition_table(obs, len(members))
                            if sorted(row["coalition"]) == sorted(members)
                            for w in row["recovers"]})
        info = {"coalition": members, "recovered_rows": recovered, "rows_missing": missing,
                "predicted_from_trees": predicted,
                "table": coalition_table(obs, min(self.params.max_size,
                                                  len(obs.workers) - 1))}
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info=info)
