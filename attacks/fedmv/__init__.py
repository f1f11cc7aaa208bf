"""Attacks on FedMV: the exchanged estimates read back as images of the private views."""

from fedsec.attacks.fedmv import alignment, average, binary, subspace, test_inference

__all__ = ["alignment", "average", "binary", "subspace", "test_inference"]
