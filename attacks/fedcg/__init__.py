"""Attacks on FedCG: multilateration, EDM completion, Gram inference (and its equations)."""

from fedsec.attacks.fedcg import edm_completion, gram_inference, multilateration

__all__ = ["edm_completion", "gram_inference", "multilateration", "unknown_width"]
