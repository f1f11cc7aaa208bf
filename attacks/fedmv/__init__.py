"""Attacks on FedMV: the exchanged estimates read back as images of the private views."""

from fedsec.attacks.fedmv import (
    alignment,
    average,
    binary,
    conditions,
    subspace,
    test_inference,
)

__all__ = ["alignment", "average", "binary", "conditions", "subspace", "test_inference"]
