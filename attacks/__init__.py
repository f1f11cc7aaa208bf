"""Attacks, one module per family; importing this package registers them."""

from attacks import contribution_readout, kernel_inversion, linear_inference

__all__ = ["contribution_readout", "kernel_inversion", "linear_inference"]
