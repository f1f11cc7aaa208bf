"""Federated protocols, one package per family.

Each component registers itself when its module is imported; the registry imports only
the module of a name it is asked for (see :mod:`fedsec.builtin_index`), so this package
imports none of them.

Installed as ``fedsec.protocols``. Families: :mod:`~fedsec.protocols.fedcg`
(hybrid federated kernel regression), :mod:`~fedsec.protocols.fdskl`
(vertically partitioned doubly stochastic kernel learning),
:mod:`~fedsec.protocols.fedmv` (federated multi-view learning),
:mod:`~fedsec.protocols.fedgraph` (Hybrid FedGraph),
:mod:`~fedsec.protocols.nri_dc` (data collaboration). Building blocks several
families use stay at the top (:mod:`~fedsec.protocols.secure_sum`).
"""
