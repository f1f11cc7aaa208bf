"""Defences, one package per protocol family; importing this package registers them.

Installed as ``fedsec.defenses``; mirrors :mod:`fedsec.protocols`. Defences
that serve any protocol stay at the top (``gaussian-noise``).
"""

from fedsec.defenses import fedcg, fedmv, gaussian_noise, nri_dc

__all__ = ["fedcg", "fedmv", "gaussian_noise", "nri_dc"]
