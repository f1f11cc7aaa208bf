"""Defences, one module each; importing this package registers them."""

from defenses import gaussian_noise

__all__ = ["gaussian_noise"]
