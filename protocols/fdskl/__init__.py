"""FDSKL: federated doubly stochastic kernel learning on vertically partitioned data.

Gu, Dang, Li, Huang. ``dsg`` (the centralized reference) and ``fdskl``; the
transcript contract is :mod:`.tags`.
"""

from fedsec.protocols.fdskl import dsg, protocol, tags

__all__ = ["dsg", "protocol", "tags"]
