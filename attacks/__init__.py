"""Attacks, one module per family; importing this package registers them."""

from attacks import contribution_readout, edm_completion, kernel_inversion, linear_inference
from attacks import pinv_reconstruction as pinv_reconstruction  # also registers epsilon_dr
from attacks import tree_collusion as tree_collusion  # also registers fdskl_inference

__all__ = [
    "contribution_readout",
    "edm_completion",
    "kernel_inversion",
    "linear_inference",
    "pinv_reconstruction",
    "tree_collusion",
]
