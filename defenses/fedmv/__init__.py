"""Defences for FedMV: clipping and Gaussian noise on S-FedMV's model updates."""

from fedsec.defenses.fedmv import update_noise

__all__ = ["update_noise"]
