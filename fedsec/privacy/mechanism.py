"""What a noise-adding defence declares: its mechanism, as data an accountant reads.

A defence that adds noise (or a protocol whose own settings add it, such as a framework's
built-in differential privacy: :meth:`fedsec.interfaces.Protocol.mechanisms`) says which
distribution and scale it draws, the sensitivity it relies on (the clipping it applies, or a
bound the user declares for the data) and for which unit of privacy, how many times each party
releases a noised value over a run, and the sampling, if any, that picks who releases.
:mod:`fedsec.privacy.accountant` turns the declarations of a run into (epsilon, delta). A
defence that clips nothing and relies on no declared bound says so (``sensitivity`` None): its
noise hides something, but no epsilon can be stated. Noise added to an aggregate by the party
that computed it (central DP) protects what that party releases, not what it received: that
party is named ``trusted``. The masking backends are not mechanisms at all: masks cancel in the
sum, which is released exactly (:func:`backend_note`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from fedsec.errors import ValidationError

#: The noise distributions the accountant knows.
DISTRIBUTIONS = ("gaussian",)
#: Where a sensitivity bound comes from: the defence's own clipping, or a bound the user
#: declared for the data (not checked by fedsec), or nowhere.
SENSITIVITY_SOURCES = ("clipping", "declared", "none")

#: Why no masking backend is a differentially private mechanism, by backend name.
BACKEND_NOTES = {
    "plain": "sends values in the clear: no noise, no privacy guarantee",
    "noise": ("masks shared between parties cancel exactly in the sum: the sum is released "
              "without noise, so the masks give no differential privacy"),
    "paillier": ("encrypts values and decrypts their sum exactly: the sum is released "
                 "without noise, so encryption gives no differential privacy"),
    "ckks": ("encrypts values and decrypts their sum up to the scheme's rounding error, "
             "which is not calibrated noise: no differential privacy"),
}


@dataclass(frozen=True, kw_only=True)
class Mechanism:
    """One defence's noise, as an accountant needs it.

    Each party releases ``releases`` values noised with ``distribution`` noise of standard
    deviation ``noise_scale`` per coordinate; changing ``unit`` (what neighbouring inputs
    differ in) moves the unnoised value by at most ``sensitivity`` in L2 norm (None: no bound
    is known, so no epsilon); each release happens with probability ``sampling_rate``
    (Poisson sampling; 1: every time). ``scope`` names the messages the noise covers when the
    protocol sends others unnoised.

    Examples
    --------
    >>> m = Mechanism(distribution="gaussian", noise_scale=2.0, sensitivity=1.0,
    ...               sensitivity_source="clipping", releases=1, unit="one party's vector")
    >>> m.noise_multiplier
    2.0
    >>> Mechanism(distribution="gaussian", noise_scale=2.0, sensitivity=None,
    ...           sensitivity_source="none", releases=1, unit="-").noise_multiplier is None
    True
    """

    distribution: str
    noise_scale: float
    sensitivity: float | None
    sensitivity_source: str
    releases: int
    unit: str
    sampling_rate: float = 1.0
    scope: str = ""
    """The messages the noise covers, when not everything the protocol sends: the guarantee
    says nothing about the others."""
    defense: str = ""
    """The registered name of the defence that declares it."""
    protocol: str = ""
    """The registered name of the protocol that declares it, when the noise is one of the
    protocol's own settings rather than a defence."""
    trusted: tuple[str, ...] = ()
    """Parties that see the values before the noise is added (central DP's aggregator, which
    noises the aggregate of updates it received in the clear): the guarantee does not hold
    against them."""
    parameters: tuple[str, ...] = ()
    """The protocol's parameters a protocol's own mechanism is read from: a defence that sets
    all of them declares that noise itself, and the protocol's copy is not counted twice."""

    def __post_init__(self) -> None:
        owner = f"the mechanism of {self.declared_by}"
        if self.distribution not in DISTRIBUTIONS:
            raise ValidationError(f"{owner}: distribution must be one of {DISTRIBUTIONS}. "
                                  f"Got {self.distribution!r} instead.")
        if self.sensitivity_source not in SENSITIVITY_SOURCES:
            raise ValidationError(f"{owner}: sensitivity_source must be one of "
                                  f"{SENSITIVITY_SOURCES}. Got {self.sensitivity_source!r} "
                                  "instead.")
        if (self.sensitivity is None) != (self.sensitivity_source == "none"):
            raise ValidationError(f"{owner}: a sensitivity needs a source ('clipping' or "
                                  "'declared'), and source 'none' goes with no sensitivity. "
                                  f"Got {self.sensitivity!r} from {self.sensitivity_source!r}.")
        if self.sensitivity is not None and not (math.isfinite(self.sensitivity)
                                                 and self.sensitivity > 0):
            raise ValidationError(f"{owner}: sensitivity must be a finite number > 0. "
                                  f"Got {self.sensitivity!r} instead.")
        if not (math.isfinite(self.noise_scale) and self.noise_scale >= 0):
            raise ValidationError(f"{owner}: noise_scale must be a finite number >= 0. "
                                  f"Got {self.noise_scale!r} instead.")
        if isinstance(self.releases, bool) or not isinstance(self.releases, int) \
                or self.releases < 1:
            raise ValidationError(f"{owner}: releases must be an int >= 1. "
                                  f"Got {self.releases!r} instead.")
        if not 0 < self.sampling_rate <= 1:
            raise ValidationError(f"{owner}: sampling_rate must be in (0, 1]. "
                                  f"Got {self.sampling_rate!r} instead.")
        if not isinstance(self.trusted, tuple) or not all(isinstance(p, str) and p
                                                          for p in self.trusted):
            raise ValidationError(f"{owner}: trusted must be a tuple of party names. "
                                  f"Got {self.trusted!r} instead.")

    @property
    def declared_by(self) -> str:
        """Who declares the noise, in words: the defence, or the protocol's own settings.

        Examples
        --------
        >>> Mechanism(distribution="gaussian", noise_scale=1.0, sensitivity=1.0,
        ...           sensitivity_source="clipping", releases=1, unit="-",
        ...           protocol="flower-fedavg").declared_by
        "protocol 'flower-fedavg'"
        """
        if self.defense:
            return self.defense
        return f"protocol {self.protocol!r}" if self.protocol else "a defence"

    @property
    def noise_multiplier(self) -> float | None:
        """Noise scale over sensitivity (None without a sensitivity bound)."""
        return None if self.sensitivity is None else self.noise_scale / self.sensitivity

    def to_json(self) -> dict[str, Any]:
        """The declaration as JSON-able data, its noise multiplier included."""
        return {**asdict(self), "trusted": list(self.trusted), "parameters": list(self.parameters),
                "noise_multiplier": self.noise_multiplier}


def backend_note(name: str) -> str:
    """Why the masking backend ``name`` is no differentially private mechanism.

    Examples
    --------
    >>> backend_note("paillier").startswith("encrypts values")
    True
    >>> backend_note("mine")
    "backend 'mine' declares no noise: no differential privacy is assumed"
    """
    return BACKEND_NOTES.get(name, f"backend {name!r} declares no noise: no differential "
                                   "privacy is assumed")


def trusted_among(privacy: Mapping[str, Any], threat: str) -> list[str]:
    """The parties of ``threat`` (comma-separated) that a run's privacy block names trusted:
    its epsilon does not hold against an adversary that includes one, so no bound measured
    by that adversary can contradict it.

    Examples
    --------
    >>> trusted_among({"trusted": ["server"]}, "server,client1"), trusted_among({}, "server")
    (['server'], [])
    """
    return sorted(set(privacy.get("trusted") or ()) & set(threat.split(",")))
