"""Attacks on Hybrid FedGraph: inverting the embeddings and cluster means clients send."""

from fedsec.attacks.fedgraph import (
    disaggregation,
    embedding_inversion,
    inverse_network,
    inversion,
    observed,
)

__all__ = ["disaggregation", "embedding_inversion", "inverse_network", "inversion",
           "observed"]
