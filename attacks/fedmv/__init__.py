"""Attacks on FedMV: the exchanged estimates read back as images of the private views, and
S-FedMV's FedAvg updates inverted back to the clients' sequences and labels."""

from fedsec.attacks.fedmv import (
    alignment,
    average,
    binary,
    conditions,
    gradient_inversion,
    subspace,
    testset_inference,
    update_inversion,
    update_labels,
    updates,
)

__all__ = [
    "alignment",
    "average",
    "binary",
    "conditions",
    "gradient_inversion",
    "subspace",
    "testset_inference",
    "update_inversion",
    "update_labels",
    "updates",
]
