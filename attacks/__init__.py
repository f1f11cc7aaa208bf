"""Attacks, one module per family; importing this package registers them."""

from attacks import contribution_readout, edm_completion, kernel_inversion, linear_inference

__all__ = [
    "contribution_readout",
    "edm_completion",
    "kernel_inversion",
    "linear_inference",
]
