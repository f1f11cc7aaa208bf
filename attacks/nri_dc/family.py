"""What the attacks on NRI-DC declare alike: the family's paper.

The attacks on the family derive from :class:`NRIDCAttack` and state only what is their own.
"""

from __future__ import annotations

from fedsec.interfaces import Attack
from fedsec.protocols.nri_dc.protocol import PAPER


class NRIDCAttack(Attack):
    """An attack on NRI-DC's data collaboration, from the family's paper."""

    paper = PAPER
