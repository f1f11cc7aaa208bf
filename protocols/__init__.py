"""Federated protocols, one module each; importing this package registers them."""

from protocols import secure_sum

__all__ = ["secure_sum"]
