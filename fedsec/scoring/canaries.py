"""The ``canary-epsilon`` scorer: an adversary's canary guesses as a lower bound on epsilon.

The auditor's half of the one-run audit (Steinke, Nasr and Jagielski, "Privacy Auditing with
One (1) Training Run", NeurIPS 2023, Algorithm 1): an attack scores each canary (how strongly
the adversary believes it was included, :mod:`fedsec.attacks.canary_guess`); the scorer reads
which canaries were included from the private store, guesses "in" for the highest scores and
"out" for the lowest at the guess counts fixed in advance
(:func:`fedsec.privacy.canary.default_guesses`), and turns the right guesses into the largest
epsilon that could not explain them at confidence ``1 - beta``
(:func:`fedsec.privacy.empirical.one_run_audit`), beside the ceiling those guesses allow.
What cannot explain them depends on the claim tested: by default (``claim = "gaussian"``) the
Gaussian mechanism with that (epsilon, delta), the claim ``gaussian-noise`` and Flower's DP
make, through its whole trade-off curve (Mahloujifar, Melis and Chaudhuri, "Auditing
f-Differential Privacy in One Run", 2024: on the Gaussian mechanism itself with 1,000
canaries, median bounds of 0.50 to 0.59 of epsilon at epsilon 2 to 8, where the (epsilon,
delta) test gives 0.34 to 0.38); with ``claim = "any"``, any (epsilon, delta)-DP mechanism,
the weaker test that holds whatever the noise (reported beside the other as
``empirical_epsilon_any``).
Delta defaults to the accountant's (:data:`fedsec.privacy.accountant.DEFAULT_DELTA`), so that
the bound and the accountant's epsilon speak of one guarantee: a bound above the accountant's
epsilon is a bug in the defence or in its declaration.

Its ``advantage`` is that of the guesses over a coin: ``1 - error / 0.5`` with ``error`` the
fraction of canaries misjudged when every score above 1/2 is read "included" (1: every canary
judged right; 0: a coin, what an adversary learns without the run).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import numpy as np

from fedsec.declare import Choice, Declared, Float, owner_of
from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.privacy.accountant import DEFAULT_DELTA
from fedsec.privacy.canary import default_guesses
from fedsec.privacy.empirical import CLAIMS, one_run_audit
from fedsec.registry import register
from fedsec.scoring.reconstruction import advantage, check_truth

PAPER = ("Steinke, Nasr and Jagielski, Privacy Auditing with One (1) Training Run, NeurIPS "
         "2023; Mahloujifar, Melis and Chaudhuri, Auditing f-Differential Privacy in One Run, "
         "2024")
#: A score above this reads "included" (scores are about 1 when included, 0 when not).
THRESHOLD = 0.5


def guess_error(included: np.ndarray, scores: np.ndarray) -> float:
    """The fraction of canaries misjudged when a score above :data:`THRESHOLD` reads
    "included".

    Examples
    --------
    >>> guess_error(np.array([True, False, True, False]), np.array([0.9, 0.1, 0.2, 0.0]))
    0.25
    """
    included = np.asarray(included, dtype=bool).ravel()
    return float(np.mean((np.asarray(scores, dtype=float).ravel() > THRESHOLD) != included))


def canary_bound(included: np.ndarray, scores: np.ndarray, *, beta: float,
                 delta: float, claim: str = "any") -> dict[str, Any]:
    """The one-run bound of ``scores`` against ``included`` under ``claim`` and what it came
    from; under the Gaussian claim, the bound against any (epsilon, delta)-DP mechanism beside
    it (``empirical_epsilon_any``).

    Examples
    --------
    >>> included = np.random.default_rng(0).random(200) < 0.5
    >>> out = canary_bound(included, included.astype(float), beta=0.05, delta=0.0)
    >>> round(out["empirical_epsilon"], 2), round(out["empirical_ceiling"], 2), out["guess_error"]
    (1.82, 1.82, 0.0)
    >>> out = canary_bound(included, included.astype(float), beta=0.05, delta=1e-5,
    ...                    claim="gaussian")
    >>> round(out["empirical_epsilon"], 2), round(out["empirical_epsilon_any"], 2)
    (2.89, 1.82)
    """
    included = np.asarray(included, dtype=bool).ravel()
    guesses = default_guesses(included.size)
    bound = one_run_audit(included, scores, n_guesses=guesses, beta=beta, delta=delta,
                          claim=claim)
    out = {"empirical_epsilon": bound.epsilon, "empirical_ceiling": bound.ceiling,
           "n_canaries": bound.n_canaries, "n_guesses": bound.n_guesses,
           "n_correct": bound.n_correct, "guess_error": guess_error(included, scores),
           "claim": claim}
    if claim != "any":
        out["empirical_epsilon_any"] = one_run_audit(included, scores, n_guesses=guesses,
                                                     beta=beta, delta=delta).epsilon
    return out


@register("scorer", "canary-epsilon")
class CanaryEpsilon(Scorer):
    """One-run empirical lower bound on epsilon (with its confidence and ceiling) from an
    adversary's canary guesses.

    One-run empirical lower bound on epsilon from an attack's canary scores.
    """

    paper = PAPER
    reads = frozenset({"values"})
    measures: ClassVar[str] = "membership"
    recovers: ClassVar[str] = "the membership of the canaries in {what}"
    glossary: ClassVar[Mapping[str, str]] = {
        "empirical_epsilon": (
            "the one-run lower bound on epsilon from the adversary's canary guesses, at "
            "confidence 1 - beta and the accountant's delta: under the Gaussian claim "
            "(Mahloujifar, Melis and Chaudhuri 2024), no Gaussian mechanism with a smaller "
            "epsilon at that delta lets it guess this well; under claim 'any' (Steinke, Nasr "
            "and Jagielski 2023), no (epsilon, delta)-DP mechanism does."),
        "empirical_epsilon_any": (
            "the bound of the same guesses against any (epsilon, delta)-DP mechanism "
            "(Steinke, Nasr and Jagielski 2023), beside the Gaussian claim's."),
        "claim": "what the guesses were tested against: 'gaussian' or 'any'.",
        "empirical_ceiling": (
            "the largest bound these canaries can give (every guess made and right)."),
        "confidence": "the confidence of the empirical bound (1 - beta).",
        "delta": "the delta the empirical bound is stated at (the accountant's by default).",
        "guess_error": (
            "the fraction of canaries misjudged when a score above 1/2 reads 'included'."),
        "n_correct": "the right guesses among the guesses the bound was computed from.",
        "n_guesses": "the guesses the bound was computed from (the most confident).",
        "n_canaries": "the canaries of the audit.",
        "advantage": (
            "1 - guess error / a coin's (1/2): 1 every canary judged right, 0 a coin."),
    }

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        beta: Annotated[float, Float(min=0.0, min_inclusive=False, max=1.0,
                                     max_inclusive=False)] = 0.05
        """One minus the confidence of the bound (split evenly over the guess counts tried)."""
        delta: Annotated[float, Float(min=0.0, max=1.0, max_inclusive=False)] = DEFAULT_DELTA
        """The delta the bound is stated at: the accountant's, to compare with its epsilon."""
        claim: Annotated[str, Choice(*CLAIMS)] = "gaussian"
        """What the guesses are tested against: ``gaussian``, the Gaussian mechanism at the
        bound's (epsilon, delta) (what ``gaussian-noise`` and Flower's DP claim, and a much
        tighter test), or ``any`` (epsilon, delta)-DP mechanism."""

        def __post_init__(self) -> None:
            if self.claim == "gaussian" and self.delta == 0:
                raise ValidationError(
                    f"The 'delta' parameter of {owner_of(self)} must be > 0 under the "
                    "Gaussian claim (every Gaussian mechanism's epsilon at delta 0 is "
                    "infinite). Give delta > 0 or claim = 'any'.")

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        check_truth(reconstruction.estimates, truth)
        if len(reconstruction.estimates) != 1:
            raise ValidationError(f"canary-epsilon scores one set of canaries; the "
                                  f"reconstruction holds {len(reconstruction.estimates)} "
                                  "targets.")
        ((key, scores),) = reconstruction.estimates.items()
        included = np.asarray(truth[key], dtype=bool)
        p = self.params
        out = canary_bound(included, np.asarray(scores), beta=p.beta, delta=p.delta,
                           claim=p.claim)
        base = reconstruction.baseline.get(key)
        if base is not None:
            baseline = canary_bound(included, np.asarray(base), beta=p.beta, delta=p.delta,
                                    claim=p.claim)
            out.update({f"baseline_{k}": baseline[k]
                        for k in ("empirical_epsilon", "guess_error")})
        out.update({"confidence": 1.0 - p.beta, "delta": p.delta, "n_targets": 1,
                    "advantage": advantage(out["guess_error"], 0.5)})
        return out
