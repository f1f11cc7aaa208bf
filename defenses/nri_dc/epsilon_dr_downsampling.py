"""epsilon-DR down-sampling: workers drop the samples their map would reveal too well.

Imakura et al., "Accuracy and privacy evaluations of collaborative data
analysis" (arXiv:2101.11144), as reviewed in Nosaka and Yoshise
(arXiv:2403.02780), section 2.3: before sharing, each NRI-DC worker computes
every sample's pseudoinverse reconstruction error ``||x - x F_i F_i^+||``
with its own secret map and drops the samples below ``epsilon``, so that what
it shares satisfies epsilon-DR privacy (Definition 2.6) even against a
worker-master collusion. The run's metrics report the certificate before and
after (``dr_passed``, ``dr_margin``, ``dr_passed_after``, ``dr_margin_after``)
and the fraction of samples dropped; its cost in accuracy is the difference
from the same run without the defence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from fedsec.declare import Declared, Float
from fedsec.interfaces import Defense
from fedsec.registry import register


@register("defense", "epsilon-dr-downsampling")
class EpsilonDRDownsampling(Defense):
    """NRI-DC workers drop samples whose pseudoinverse reconstruction error is below epsilon before
    sharing (epsilon-DR privacy by down-sampling).

    Each worker drops the samples whose reconstruction error is below epsilon.
    """

    paper = "Imakura et al., Accuracy and privacy evaluations of collaborative data analysis, 2021"
    protocols = frozenset({"nri-dc"})
    sets: ClassVar[Mapping[str, str]] = {"dr_epsilon": "epsilon"}
    fixes: ClassVar[Mapping[str, Any]] = {"dr_downsample": True}

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        epsilon: Annotated[float, Float(min=0.0, min_inclusive=False)] = 0.1
        """Sets the protocol's dr_epsilon: each worker drops the samples whose reconstruction error
        ||x - x F F^+|| is below epsilon (feature units)."""
