"""What the attacks on FedCG declare alike: the family's paper, whose section 4 studies them,
and what the attacks on the leaked kernel blocks read and recover.

The attacks that section studies derive from :class:`FedCGAttack` and state only what is
their own; ``gram-inference``, after FDSKL's paper, names that one. Those that place the
points behind a kernel block derive from :class:`KernelBlockAttack`.
"""

from __future__ import annotations

from fedsec.interfaces import Attack
from fedsec.protocols.fedcg import tags

PAPER = ("Damiani, Rodina, Decherchi, A Hybrid Federated Kernel Regularized Least Squares "
         "Algorithm, 2024, section 4")


class FedCGAttack(Attack):
    """An attack on a FedCG protocol (naive, secure or the centralized CenCG), from the
    family's paper."""

    paper = PAPER


class KernelBlockAttack(FedCGAttack):
    """An attack that places the points behind the kernel blocks an adversary sees: uploaded
    under naive FedCG, or divided out of the chain products under secure FedCG."""

    needs_any_tags = frozenset({tags.KERNEL_BLOCK, tags.CHAIN_PRODUCT})
    default_scorer = "point-recovery"
