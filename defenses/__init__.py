"""Defences, one module each; importing this package registers them."""

from defenses import gaussian_noise, landmarks

__all__ = ["gaussian_noise", "landmarks"]
