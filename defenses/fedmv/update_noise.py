"""Update clipping and Gaussian noise for S-FedMV's FedAvg (DP-style).

Each client clips the change of its extractors' weights over a round to norm ``clip`` and adds
``N(0, (noise_multiplier * clip)^2)`` to every value, from its own private stream, before the
update goes to the server: the mechanism of DP-FedAvg (McMahan, Ramage, Talwar, Zhang,
"Learning differentially private recurrent language models", ICLR 2018) applied per client.
No privacy budget is accounted: fedsec measures what an inversion attack still recovers, and
what accuracy is left, at each setting. Secure aggregation of the updates is the other
defence: run S-FedMV with the ``noise``, ``paillier`` or ``ckks`` backend and the server sees
only their sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from fedsec.interfaces import Defense
from fedsec.registry import register
from fedsec.validation import check_float

OWNER = "defense 'update-noise'"


@register("defense", "update-noise")
class UpdateNoise(Defense):
    """Clip each client's update to norm ``clip`` and add Gaussian noise (sigma = z * clip)."""

    summary = ("S-FedMV clients clip their update to norm C and add N(0, (z C)^2) noise "
               "(DP-FedAvg's mechanism, no budget accounted).")
    paper = ("McMahan, Ramage, Talwar, Zhang, Learning differentially private recurrent "
             "language models, ICLR 2018")
    protocols = frozenset({"s-fedmv"})
    sets: ClassVar[Mapping[str, str]] = {"clip": "clip", "noise_multiplier": "noise_multiplier"}

    @dataclass(frozen=True, kw_only=True)
    class Params:
        clip: float = 1.0
        """Sets the protocol's clip: each client clips its change of weights over a round to this L2
        norm."""
        noise_multiplier: float = 0.1
        """Sets the protocol's noise_multiplier: each clipped update value gets N(0,
        (noise_multiplier * clip)^2) noise; 0: clipping only."""

        def __post_init__(self) -> None:
            check_float(self.clip, owner=OWNER, name="clip", min_value=0.0, min_inclusive=False)
            check_float(self.noise_multiplier, owner=OWNER, name="noise_multiplier",
                        min_value=0.0)
