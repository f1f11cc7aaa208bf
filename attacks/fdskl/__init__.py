"""Attacks on FDSKL: its transcripts as equations (for ``linear-inference``) and tree collusion."""

from fedsec.attacks.fdskl import equations, observations, tree_collusion

__all__ = ["equations", "observations", "tree_collusion"]
