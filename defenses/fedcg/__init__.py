"""Defences for FedCG: random landmarks, few landmarks, random kernel widths."""

from fedsec.defenses.fedcg import landmarks

__all__ = ["landmarks"]
