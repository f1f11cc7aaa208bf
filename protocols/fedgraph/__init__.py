"""Hybrid FedGraph: client extractors, cluster means and a GCN over the client graph.

Paper 004 (Hybrid FedGraph). ``fedgraph`` (PyTorch, the ``nn`` extra); the transcript
contract is :mod:`.tags`, the clustering :mod:`.clustering`, the networks :mod:`.models`, the
privacy score :mod:`.privacy_score`.
"""

from fedsec.protocols.fedgraph import clustering, graph, items, models, privacy_score, tags
from fedsec.protocols.fedgraph import protocol as protocol

__all__ = ["clustering", "graph", "items", "models", "privacy_score", "protocol", "tags"]
