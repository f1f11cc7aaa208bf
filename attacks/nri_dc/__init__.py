"""Attacks on NRI-DC: pseudoinverse reconstruction of the workers' shared rows."""

from fedsec.attacks.nri_dc import pinv_reconstruction, worker_view

__all__ = ["pinv_reconstruction", "worker_view"]
