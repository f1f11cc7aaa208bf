"""FedCG's own countermeasures: random landmarks, few landmarks, random kernel widths.

Damiani, Rodina, Decherchi, "A Hybrid Federated Kernel Regularized Least
Squares Algorithm" (2024), sections 2.2 and 4: landmarks drawn uniformly (U)
or from a normal fitted to the training data (N) instead of training rows (P)
ship no data point; fewer landmarks mean fewer distances per point (and
regularise, Rudi et al. 2015); a random width per landmark
(``gamma_j = gamma (1 + u_j)``) means ``-log K / gamma`` is no longer a
distance matrix for an attacker who lacks the clients' seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, ClassVar

from fedsec.declare import Choice, Declared, Float, Int
from fedsec.interfaces import Defense
from fedsec.registry import register

PAPER = ("Damiani, Rodina, Decherchi, A Hybrid Federated Kernel Regularized Least Squares "
         "Algorithm, 2024")
FEDCG = frozenset({"cencg", "fedcg-naive", "fedcg-secure"})


class FedCGDefense(Defense):
    """A countermeasure of FedCG's paper: it sets one parameter of a FedCG protocol."""

    paper = PAPER
    protocols = FEDCG


@register("defense", "random-landmarks")
class RandomLandmarks(FedCGDefense):
    """Draw landmarks at random (U or N) instead of sampling training rows (P).

    Landmarks drawn at random (U: uniform on [0,1]^d, N: normal fitted to the data).
    """

    sets: ClassVar[Mapping[str, str]] = {"landmark_method": "method"}

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        method: Annotated[str, Choice("U", "N")] = "U"
        """Sets the protocol's landmark_method: U (uniform on [0, 1] per feature) or N (normal with
        the pooled training mean and std)."""


@register("defense", "few-landmarks")
class FewLandmarks(FedCGDefense):
    """Use m landmarks (below the feature count, no point is identifiable).

    Fewer landmarks: fewer distances per point to invert.
    """

    sets: ClassVar[Mapping[str, str]] = {"n_landmarks": "m"}

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        m: Annotated[int, Int(min=1)] = 5
        """Sets the protocol's n_landmarks: the number of landmarks (below the feature count, no
        point is identifiable)."""


@register("defense", "random-kernel-width")
class RandomKernelWidth(FedCGDefense):
    """Give each landmark its own random kernel width gamma (1 + u_j), u_j ~ U(0, jitter).

    A random kernel width per landmark, drawn from the clients' seed.
    """

    sets: ClassVar[Mapping[str, str]] = {"gamma_jitter": "jitter"}

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        jitter: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1.0
        """Sets the protocol's gamma_jitter: landmark j gets width gamma (1 + u_j), u_j ~ U(0,
        jitter)."""
