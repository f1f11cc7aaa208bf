"""Federated protocols, one package per family; importing this package registers them.

Installed as ``fedsec.protocols``. Families: :mod:`~fedsec.protocols.fedcg`
(hybrid federated kernel regression), :mod:`~fedsec.protocols.fdskl`
(vertically partitioned doubly stochastic kernel learning),
:mod:`~fedsec.protocols.fedmv` (federated multi-view learning),
:mod:`~fedsec.protocols.fedgraph` (Hybrid FedGraph),
:mod:`~fedsec.protocols.nri_dc` (data collaboration). Building blocks several
families use stay at the top (:mod:`~fedsec.protocols.secure_sum`).
"""

from fedsec.protocols import fdskl, fedcg, fedgraph, fedmv, nri_dc, secure_sum

__all__ = ["fdskl", "fedcg", "fedgraph", "fedmv", "nri_dc", "secure_sum"]
