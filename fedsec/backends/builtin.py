"""Imports every built-in backend so each registers itself."""

from fedsec.backends import ckks, noise, paillier, plain

__all__ = ["ckks", "noise", "paillier", "plain"]
