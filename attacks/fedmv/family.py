"""What the attacks on FedMV declare alike: the family's paper, and what the attacks on one
protocol's messages read.

The attacks the family's paper studies derive from :class:`FedMVAttack` and state only what is
their own; those taken from other papers (DLG, iDLG, Inverting Gradients) name theirs. Those
that read V-FedMV's view estimates and consensus derive from :class:`ConsensusAttack`, those
that read S-FedMV's FedAvg updates from :class:`FedAvgUpdateAttack`.
"""

from __future__ import annotations

from fedsec.interfaces import Attack
from fedsec.protocols.fedmv import tags
from fedsec.protocols.fedmv.setup import PAPER


class FedMVAttack(Attack):
    """An attack on a FedMV protocol (V-FedMV, H-FedMV, S-FedMV), from the family's paper."""

    paper = PAPER


class ConsensusAttack(FedMVAttack):
    """An attack on V-FedMV that reads the clients' view estimates ``(zeta_k, Z_k)`` and the
    consensus ``Z`` the server returns each round."""

    needs_tags = frozenset({tags.VIEW_ESTIMATE, tags.CONSENSUS})


class FedAvgUpdateAttack(FedMVAttack):
    """An attack on S-FedMV that reads a client's FedAvg update against the global extractor
    weights it started from."""

    needs_tags = frozenset({tags.EXTRACTOR_GLOBAL, tags.EXTRACTOR_UPDATE})
