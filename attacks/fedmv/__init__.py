"""Attacks on FedMV: the exchanged estimates read back as images of the private views."""

from fedsec.attacks.fedmv import alignment, subspace

__all__ = ["alignment", "subspace"]
