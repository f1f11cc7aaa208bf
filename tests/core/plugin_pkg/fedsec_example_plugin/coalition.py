"""Unmask one sender's contribution to a secure sum with the keys of its mask partners.

Under pairwise masking (Bonawitz et al., CCS 2017; fedsec's ``noise`` backend) each sender
masks its vector with a key shared with every other sender, so one masked contribution is
uniformly random to the aggregator that receives it. A coalition of the aggregator (which
observes the masked contribution) and every other sender (which together hold each of its
mask keys) removes the masks and reads the vector: no member can do it alone.
"""

from __future__ import annotations

import numpy as np

from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import truth_key
from fedsec.protocols.secure_sum import RESULT_TAG
from fedsec.transcript import Message
from fedsec.view import View

PAPER = "Bonawitz et al., Practical Secure Aggregation for Privacy-Preserving ML, CCS 2017"


def outsiders(view: View) -> list[Message]:
    """The masked contributions of senders outside the coalition that it observed."""
    members = set(view.threat.members)
    return [m for m in view.select(tag=CONTRIBUTION_TAG)
            if m.sender not in members and m.protection != "plain"]


def revealed_sum(view: View) -> np.ndarray | None:
    """The sum the aggregator broadcast, when the coalition saw it."""
    for m in view.select(tag=RESULT_TAG):
        if view.can_open(m):
            return np.asarray(view.open(m), dtype=float)
    return None


class KeyPartnerUnmask(Attack):
    """Open the masked contributions of non-members whose every mask key the coalition holds."""

    summary = ("A coalition of the aggregator and a sender's mask partners removes the "
               "sender's pairwise masks and reads its contribution to a secure sum.")
    paper = PAPER
    needs_tags = frozenset({CONTRIBUTION_TAG, RESULT_TAG})
    closed_form = True
    produces = "values"

    def not_applicable(self, view: View) -> str | None:
        reason = super().not_applicable(view)
        if reason is not None:
            return reason
        if not any(view.can_open(m) for m in outsiders(view)):
            return (f"{view.threat} opens no masked contribution of a non-member: it needs the "
                    "aggregator, which receives them, and every mask partner of a sender")
        return None

    def run(self, view: View) -> Reconstruction:
        contributions = outsiders(view)
        senders = sorted({m.sender for m in view.select(tag=CONTRIBUTION_TAG)})
        total = revealed_sum(view)
        estimates, baseline = {}, {}
        for m in contributions:
            key = truth_key(m.sender, "value", "vector")
            share = (total / len(senders) if total is not None
                     else np.zeros(int(m.meta.get("elements", 0))))
            baseline[key] = share
            estimates[key] = (np.asarray(view.open(m), dtype=float) if view.can_open(m)
                              else share)
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline,
                              info={"opened": sum(view.can_open(m) for m in contributions),
                                    "targets": len(contributions)})
