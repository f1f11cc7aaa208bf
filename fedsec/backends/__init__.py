"""Masking backends: how values are protected in transit and combined.

``plain`` is the unprotected baseline every audit compares against.
"""

from fedsec.backends.plain import PlainBackend
from fedsec.backends.primitives import secure_sum

__all__ = ["PlainBackend", "secure_sum"]
