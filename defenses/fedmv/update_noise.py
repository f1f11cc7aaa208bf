"""Update clipping and Gaussian noise for S-FedMV's FedAvg (DP-style).

Each client clips the change of its extractors' weights over a round to norm ``clip`` and adds
``N(0, (noise_multiplier * clip)^2)`` to every value, from its own private stream, before the
update goes to the server: the mechanism of DP-FedAvg (McMahan, Ramage, Talwar, Zhang,
"Learning differentially private recurrent language models", ICLR 2018) applied per client.
The declared mechanism (:meth:`UpdateNoise.mechanism`) lets the accountant state epsilon for
one client's updates: Gaussian noise of multiplier ``noise_multiplier`` on an update clipped to
``clip``, released once per FedAvg round by every client. It covers the updates only: the row
count each client sends beside its update and the H-FedMV rounds that follow carry no noise and
are outside the guarantee. Secure aggregation of the updates is the other defence: run
S-FedMV with the ``noise``, ``paillier`` or ``ckks`` backend and the server sees only their
sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from fedsec.declare import Declared, Float
from fedsec.interfaces import Defense
from fedsec.privacy.mechanism import Mechanism
from fedsec.protocols.fedmv.sequential import clipped_update_noise
from fedsec.registry import register


@register("defense", "update-noise")
class UpdateNoise(Defense):
    """S-FedMV clients clip their update to norm C and add N(0, (z C)^2) noise (DP-FedAvg's
    mechanism, accounted per client over its rounds).

    Clip each client's update to norm ``clip`` and add Gaussian noise (sigma = z * clip).
    """

    paper = ("McMahan, Ramage, Talwar, Zhang, Learning differentially private recurrent "
             "language models, ICLR 2018")
    protocols = frozenset({"s-fedmv"})
    sets: ClassVar[Mapping[str, str]] = {"clip": "clip", "noise_multiplier": "noise_multiplier"}

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        clip: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1.0
        """Sets the protocol's clip: each client clips its change of weights over a round to this L2
        norm."""
        noise_multiplier: Annotated[float, Float(min=0.0)] = 0.1
        """Sets the protocol's noise_multiplier: each clipped update value gets N(0,
        (noise_multiplier * clip)^2) noise; 0: clipping only."""

    def mechanism(self, protocol_params: Mapping[str, Any]) -> Mechanism | None:
        """Gaussian noise of scale noise_multiplier * clip on an update clipped to clip, one
        release per client and FedAvg round (every client takes part in every round)."""
        p = self.params
        if not p.noise_multiplier:
            return None
        return clipped_update_noise(p.clip, p.noise_multiplier,
                                    int(protocol_params.get("fedavg_rounds", 1)),
                                    defense=self.name)
