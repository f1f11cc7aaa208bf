"""Defences for NRI-DC: epsilon-DR down-sampling."""

from fedsec.defenses.nri_dc import epsilon_dr_downsampling

__all__ = ["epsilon_dr_downsampling"]
