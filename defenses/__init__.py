"""Defences, one module each; importing this package registers them."""

from defenses import epsilon_dr_downsampling as epsilon_dr_downsampling
from defenses import gaussian_noise, landmarks

__all__ = ["epsilon_dr_downsampling", "gaussian_noise", "landmarks"]
