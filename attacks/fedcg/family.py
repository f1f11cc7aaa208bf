"""What the attacks on FedCG declare alike: the family's paper, whose section 4 studies them.

The attacks that section studies derive from :class:`FedCGAttack` and state only what is
their own; ``gram-inference``, after FDSKL's paper, names that one.
"""

from __future__ import annotations

from fedsec.interfaces import Attack

PAPER = ("Damiani, Rodina, Decherchi, A Hybrid Federated Kernel Regularized Least Squares "
         "Algorithm, 2024, section 4")


class FedCGAttack(Attack):
    """An attack on a FedCG protocol (naive, secure or the centralized CenCG), from the
    family's paper."""

    paper = PAPER
