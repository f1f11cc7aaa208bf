"""Attacks on Hybrid FedGraph: inverting the embeddings and cluster means clients send."""

from fedsec.attacks.fedgraph import embedding_inversion, inversion

__all__ = ["embedding_inversion", "inversion"]
