"""Attacks, one package per protocol family; importing this package registers them.

Installed as ``fedsec.attacks``; mirrors :mod:`fedsec.protocols`. Attacks that
serve several families stay at the top: ``contribution-readout`` (secure sums)
and ``linear-inference`` (the linear-system engine of
:mod:`~fedsec.attacks.linear_systems`, with one equation extractor per family).
"""

from fedsec.attacks import (
    contribution_readout,
    fdskl,
    fedcg,
    fedgraph,
    fedmv,
    linear_inference,
    nri_dc,
)

__all__ = ["contribution_readout", "fdskl", "fedcg", "fedgraph", "fedmv", "linear_inference",
           "nri_dc"]
