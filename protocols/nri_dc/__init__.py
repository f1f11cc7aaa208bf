"""NRI-DC: non-readily identifiable data collaboration over matrix manifolds.

Nosaka and Yoshise (arXiv:2403.02780). ``nri-dc``; the transcript contract is
:mod:`.tags`.
"""

from fedsec.protocols.nri_dc import protocol, tags

__all__ = ["protocol", "tags"]
