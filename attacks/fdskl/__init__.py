"""Attacks on FDSKL: its transcripts as equations (for ``linear-inference``) and tree collusion."""

from fedsec.attacks.fdskl import equations, model_privacy, observations, tree_collusion

__all__ = ["equations", "model_privacy", "observations", "tree_collusion"]
