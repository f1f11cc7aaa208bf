"""Round what each party contributes to a secure sum before it leaves (coarsening)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np

from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.declare import Declared, Int
from fedsec.federation import Party
from fedsec.interfaces import Defense


class RoundContributions(Defense):
    """Rounds every value a party sends to secure-sum's aggregator."""

    summary = "Each party rounds its secure-sum contribution to a number of decimals."
    protocols = frozenset({"secure-sum"})
    points = frozenset({CONTRIBUTION_TAG})

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        decimals: Annotated[int, Int(min=0)] = 0
        """The decimals each value keeps; 0: rounded to an integer."""

    def transform(self, party: Party, tag: str, values: np.ndarray) -> np.ndarray:
        return np.round(np.asarray(values, dtype=float), self.params.decimals)
