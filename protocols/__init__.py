"""Federated protocols, one module each; importing this package registers them."""

from protocols import cencg, fedcg_naive, fedcg_secure, secure_sum
from protocols import fdskl as fdskl  # also registers dsg
from protocols import nri_dc as nri_dc

__all__ = ["cencg", "fdskl", "fedcg_naive", "fedcg_secure", "nri_dc", "secure_sum"]
