"""Read individual contributions to a sum from what the aggregator saw.

The attack secure aggregation exists to stop (Bonawitz et al., CCS 2017): an
aggregator, or anyone on its links, that can read a sender's contribution has
that sender's private vector. Contributions it cannot open fall back to the
naive baseline: the revealed sum divided by the number of senders, which is
all a correctly protected sum lets the aggregator infer about one sender.
"""

from __future__ import annotations

import numpy as np

from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import truth_key
from fedsec.protocols.secure_sum import RESULT_TAG
from fedsec.registry import register
from fedsec.views import View

RESULT_TAGS = (RESULT_TAG,)


def revealed_sum(view: View) -> np.ndarray | None:
    """The secure sum's revealed total, when the adversary observed and can open it."""
    for tag in RESULT_TAGS:
        for m in view.select(tag=tag):
            if view.can_open(m):
                return np.asarray(view.open(m), dtype=float)
    return None


def equal_share(total: np.ndarray, n_senders: int) -> np.ndarray:
    """The naive guess of one sender's vector: the sum split evenly."""
    return np.asarray(total, dtype=float) / n_senders


@register("attack", "contribution-readout")
class ContributionReadout(Attack):
    """Reads each sender's contribution to a secure sum from the observed messages.

    Take each observed contribution at face value when it is readable.
    """

    paper = "Bonawitz et al., Practical Secure Aggregation for Privacy-Preserving ML, CCS 2017"
    needs_tags = frozenset({CONTRIBUTION_TAG})
    closed_form = True

    def run(self, view: View) -> Reconstruction:
        contributions = view.select(tag=CONTRIBUTION_TAG)
        senders = sorted({m.sender for m in contributions})
        total = revealed_sum(view)
        length = None if total is None else total.size
        estimates, opaque = {}, 0
        readable = {}
        for m in contributions:
            if view.can_open(m):
                readable[m.sender] = np.asarray(view.open(m), dtype=float)
                length = readable[m.sender].size
            else:
                opaque += 1
        if length is None:
            length = int(next((m.meta["elements"] for m in contributions
                               if m.meta.get("elements")), 0))
        baseline_vector = (equal_share(total, len(senders)) if total is not None
                           else np.zeros(length))
        baseline = {}
        for sender in senders:
            key = truth_key(sender, "value", "vector")
            baseline[key] = baseline_vector
            estimates[key] = readable.get(sender, baseline_vector)
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates=estimates, baseline=baseline,
            info={"contributions_seen": len(contributions), "readable": len(readable),
                  "opaque": opaque, "sum_observed": total is not None},
        )
