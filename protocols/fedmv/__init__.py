"""FedMV: federated multi-view learning (MVL, V-FedMV, H-FedMV).

Che et al., "Federated Multi-View Learning for Private Medical Data Integration and
Analysis" (ACM TIST 2022). ``mvl`` (centralized), ``v-fedmv`` (one client per view),
``h-fedmv`` (clients holding rows); the maths is :mod:`.maths`, the transcript contract
:mod:`.tags`.
"""

from fedsec.protocols.fedmv import horizontal, maths, tags, vertical

__all__ = ["horizontal", "maths", "tags", "vertical"]
