"""FedMV: federated multi-view learning (MVL, V-FedMV, H-FedMV).

Che et al., "Federated Multi-View Learning for Private Medical Data Integration and
Analysis" (ACM TIST 2022). ``mvl`` (centralized), ``v-fedmv`` (one client per view),
``h-fedmv`` (clients holding rows), ``s-fedmv`` (GRU extractors trained by FedAvg, then
H-FedMV; PyTorch, the ``nn`` extra); the maths is :mod:`.maths`, the transcript contract
:mod:`.tags`.
"""

from fedsec.protocols.fedmv import horizontal, maths, sequential, tags, vertical

__all__ = ["horizontal", "maths", "sequential", "tags", "vertical"]
