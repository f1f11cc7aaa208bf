"""What the attacks on FedMV declare alike: the family's paper.

The attacks the family's paper studies derive from :class:`FedMVAttack` and state only what is
their own; those taken from other papers (DLG, iDLG, Inverting Gradients) name theirs.
"""

from __future__ import annotations

from fedsec.interfaces import Attack
from fedsec.protocols.fedmv.setup import PAPER


class FedMVAttack(Attack):
    """An attack on a FedMV protocol (V-FedMV, H-FedMV, S-FedMV), from the family's paper."""

    paper = PAPER
