"""Attacks on FedMV: the exchanged estimates read back as images of the private views."""

from fedsec.attacks.fedmv import alignment, average, subspace, test_inference

__all__ = ["alignment", "average", "subspace", "test_inference"]
