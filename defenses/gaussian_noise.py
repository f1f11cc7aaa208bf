"""Gaussian perturbation of what a party sends (output perturbation).

Each party adds independent N(0, sigma^2) noise to every value it sends at
the points the protocol declares, trading accuracy of the aggregate for
leakage of the individual values (the Gaussian mechanism of Dwork and Roth,
"The Algorithmic Foundations of Differential Privacy", 2014). sigma is the
user's choice; a formal guarantee needs a sensitivity bound as well: with
``clip`` each party first scales what it sends down to L2 norm ``clip``
(then adding or removing its contribution, or changing it, moves the value
by at most ``clip`` per party and point), or ``sensitivity`` declares a bound
the data obeys (for secure-sum's column sums and row count on min-max scaled
features, adding or removing one record moves them by at most sqrt(d + 1)).
With neither, the noise has no epsilon, and the declared mechanism says so.
The noise is simulation randomness from the party's own seeded stream, so
runs stay reproducible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.declare import Declared, Float, owner_of
from fedsec.errors import ValidationError
from fedsec.federation import Party
from fedsec.interfaces import Defense
from fedsec.privacy.mechanism import Mechanism
from fedsec.registry import register


@register("defense", "gaussian-noise")
class GaussianNoise(Defense):
    """Each party adds N(0, sigma^2) noise to what it sends (an epsilon once clip or sensitivity
    bounds it).

    Adds N(0, sigma^2) to every value a party sends at the declared points.
    """

    paper = "Dwork and Roth, The Algorithmic Foundations of Differential Privacy, 2014"
    protocols = frozenset({"secure-sum"})
    points = frozenset({CONTRIBUTION_TAG})

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        sigma: Annotated[float, Float(min=0.0)] = 1.0
        """Standard deviation of the N(0, sigma^2) noise each party adds to every value it sends at
        the declared points; 0: none."""

        clip: Annotated[float, Float(min=0.0)] = 0.0
        """Each party first scales what it sends at the declared points down to this L2 norm:
        the sensitivity the accountant uses (per party and point); 0: no clipping."""
        sensitivity: Annotated[float, Float(min=0.0)] = 0.0
        """The L2 sensitivity of what a party sends, declared for the data and not checked (with
        no clipping): what the accountant uses; 0: none declared (no epsilon without clip)."""

        def __post_init__(self) -> None:
            if self.clip and self.sensitivity:
                raise ValidationError(
                    f"{owner_of(self)}: clip and sensitivity both bound the sensitivity; set "
                    "one (clip scales each party's values down to it, sensitivity declares a "
                    "bound the data obeys).")

    def transform(self, party: Party, tag: str, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        if self.params.clip:
            values = clip_norm(values, self.params.clip)
        noise = party.rng.normal(0.0, self.params.sigma, size=np.shape(values))
        return values + noise

    def mechanism(self, protocol_params: Mapping[str, Any]) -> Mechanism | None:
        """Gaussian noise of scale sigma, released once per party (secure-sum sends each
        party's vector once); the sensitivity from clip or the declared bound, else none."""
        p = self.params
        if not p.sigma:
            return None
        if p.clip:
            bound, source = p.clip, "clipping"
            unit = "one party's vector, added or removed, or moved by at most clip before clipping"
        elif p.sensitivity:
            bound, source = p.sensitivity, "declared"
            unit = "what the declared sensitivity covers (for example one record)"
        else:
            bound, source, unit = None, "none", "none: no bound on what a party sends"
        return Mechanism(distribution="gaussian", noise_scale=float(p.sigma),
                         sensitivity=None if bound is None else float(bound),
                         sensitivity_source=source, releases=1, unit=unit,
                         scope=f"the values sent as {', '.join(sorted(self.points))}",
                         defense=self.name)


def clip_norm(values: np.ndarray, bound: float) -> np.ndarray:
    """``values`` scaled down to L2 norm ``bound`` (unchanged when within it).

    Examples
    --------
    >>> np.round(clip_norm(np.array([3.0, 4.0]), 1.0), 12).tolist()
    [0.6, 0.8]
    >>> clip_norm(np.array([0.3, 0.4]), 1.0).tolist()
    [0.3, 0.4]
    """
    norm = float(np.linalg.norm(values))
    return values * (bound / norm) if norm > bound else values
