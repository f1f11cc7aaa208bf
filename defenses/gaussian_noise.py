"""Gaussian perturbation of what a party sends (output perturbation).

Each party adds independent N(0, sigma^2) noise to every value it sends at
the points the protocol declares, trading accuracy of the aggregate for
leakage of the individual values (the additive-noise mechanism of Dwork and
Roth, "The Algorithmic Foundations of Differential Privacy", 2014, without
sensitivity calibration: sigma is the user's choice, so no formal privacy
guarantee is claimed). The noise is simulation randomness from the party's
own seeded stream, so runs stay reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.federation import Party
from fedsec.interfaces import Defense
from fedsec.registry import register
from fedsec.validation import check_float


@register("defense", "gaussian-noise")
class GaussianNoise(Defense):
    """Adds N(0, sigma^2) to every value a party sends at the declared points."""

    summary = "Each party adds N(0, sigma^2) noise to what it sends (no formal DP guarantee)."
    paper = "Dwork and Roth, The Algorithmic Foundations of Differential Privacy, 2014"
    protocols = frozenset({"secure-sum"})
    points = frozenset({CONTRIBUTION_TAG})

    @dataclass(frozen=True, kw_only=True)
    class Params:
        sigma: float = 1.0
        """Standard deviation of the N(0, sigma^2) noise each party adds to every value it sends at
        the declared points; 0: none."""

        def __post_init__(self) -> None:
            check_float(self.sigma, owner="defense 'gaussian-noise'", name="sigma", min_value=0.0)

    def transform(self, party: Party, tag: str, values: np.ndarray) -> np.ndarray:
        noise = party.rng.normal(0.0, self.params.sigma, size=np.shape(values))
        return np.asarray(values, dtype=float) + noise
