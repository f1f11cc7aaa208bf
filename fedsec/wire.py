"""What a protected value looks like on the wire."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Wire:
    """A payload with its protection, as a masking backend hands it to the network.

    Attributes
    ----------
    payload : numpy.ndarray or bytes
        What crosses the link (masked values, ciphertext bytes, or plain values).
    protection : str
        The backend's protection name (``plain``, ``noise``, ``paillier``, ``ckks``).
    key_id : str
        The key that opens it; empty for plain values.
    meta : Mapping
        Public facts about the protected value (encoding scale, element count).
    """

    payload: np.ndarray | bytes
    protection: str = "plain"
    key_id: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
