"""FedCG: hybrid federated kernel regularized least squares by conjugate gradient.

Damiani, Rodina, Decherchi (2024). ``cencg`` (the centralized reference),
``fedcg-naive`` and ``fedcg-secure``; the transcript contract is :mod:`.tags`.
"""

from fedsec.protocols.fedcg import cencg, naive, secure, tags

__all__ = ["cencg", "naive", "secure", "tags"]
