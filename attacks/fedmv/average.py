"""H-FedMV's average read back: a coalition of all clients but one recovers that client's weights.

The server broadcasts ``W_bar = sum_l N_l W^l / N`` each round. A coalition holding every
client but one knows its own ``N_l W^l`` (its own contributions) and solves for the rest:
``W^other = (N W_bar - sum_own N_l W^l) / N_other``. With two clients, each reads the other.
The row count of the missing client is not sent in the clear; the paper gives every client
the same number of samples, so by default the attack assumes the mean of the coalition's own
counts (``other_rows`` sets it). Since a local loop run to convergence ends at the client's own
optimum whatever was broadcast, the weights read from one round are its weights of every
round. Scored with ``reconstruction-error`` against the client's last local weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np

from fedsec.attacks.fedmv.family import FedMVAttack
from fedsec.declare import Declared, Int
from fedsec.outcomes import Reconstruction
from fedsec.private_store import truth_key
from fedsec.protocols.fedmv import tags
from fedsec.protocols.fedmv.setup import SERVER
from fedsec.registry import register
from fedsec.view import View


@register("attack", "average-difference")
class AverageDifference(FedMVAttack):
    """H-FedMV: a coalition of every client but one subtracts its own weighted weights from the
    broadcast average and reads the last client's W.

    All clients but one, with the broadcast average: the remaining client's weights.
    """

    needs_tags = frozenset({tags.GLOBAL_WEIGHTS, tags.LOCAL_WEIGHTS})
    closed_form = True

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        other_rows: Annotated[int, Int(min=0)] = 0
        """Row count assumed for the missing client (its weight in the average); 0: the mean of the
        coalition's own counts."""

    def _target(self, view: View) -> str | None:
        clients = [p for p in view.parties if p != SERVER]
        missing = [c for c in clients if c not in view.knowledge]
        return missing[0] if len(missing) == 1 else None

    def unmet(self, view: View) -> str | None:
        if self._target(view) is None:
            return (f"{view.threat} is not every client but one: the average mixes two or more "
                    "unknown contributions")
        return None

    def run(self, view: View) -> Reconstruction:
        target = self._target(view)
        assert target is not None
        own: dict[int, list[np.ndarray]] = {}
        for message in view.select(tag=tags.LOCAL_WEIGHTS):
            if message.sender in view.knowledge and view.can_open(message):
                own.setdefault(int(message.round), []).append(
                    np.asarray(view.open(message), dtype=np.float64))
        averages = {int(m.round): np.asarray(view.open(m), dtype=np.float64)
                    for m in view.select(tag=tags.GLOBAL_WEIGHTS) if view.can_open(m)}
        usable = [r for r in sorted(own) if r + 1 in averages]
        estimates: dict[str, np.ndarray] = {}
        baseline: dict[str, np.ndarray] = {}
        if usable:
            r = usable[-1]
            counts = [float(v[0]) for v in own[r]]
            other = float(self.params.other_rows) or float(np.mean(counts))
            total = sum(counts) + other
            weighted = sum(v[1:] for v in own[r])
            key = truth_key(target, "value", tags.FINAL_LOCAL_WEIGHTS)
            estimates[key] = (total * averages[r + 1] - weighted) / other
            baseline[key] = averages[r + 1]  # the naive guess: the average itself
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline,
                              info={"target": target, "rounds_used": usable[-1:],
                                    "assumed_rows": self.params.other_rows or "coalition mean"})
