"""Federated protocols, one module each; importing this package registers them."""

from protocols import cencg, fedcg_naive, fedcg_secure, secure_sum

__all__ = ["cencg", "fedcg_naive", "fedcg_secure", "secure_sum"]
