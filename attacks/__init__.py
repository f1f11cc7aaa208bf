"""Attacks, one module per family; importing this package registers them."""

from attacks import contribution_readout, kernel_inversion

__all__ = ["contribution_readout", "kernel_inversion"]
