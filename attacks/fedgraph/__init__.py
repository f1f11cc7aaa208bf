"""Attacks on Hybrid FedGraph: inverting the embeddings and cluster means clients send."""

from fedsec.attacks.fedgraph import (
    decoders,
    disaggregation,
    embedding_inversion,
    gauss_newton,
    inverse_network,
    inversion,
    learned_decoder,
    observed,
)

__all__ = ["decoders", "disaggregation", "embedding_inversion", "gauss_newton",
           "inverse_network", "inversion", "learned_decoder", "observed"]
