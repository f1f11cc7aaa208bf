"""Guess which canaries a secure sum carried, from what one adversary saw.

The adversary's half of the white-box one-run audit (Steinke, Nasr and Jagielski, "Privacy
Auditing with One (1) Training Run", NeurIPS 2023): ``secure-sum`` in canary mode
records in every contribution's metadata the public seed its canaries are drawn from, so the
adversary regenerates them and scores each by the inner product of the canary block it
observed with it, over its squared norm (:func:`fedsec.privacy.canary.sign_scores`: about 1
when included, 0 when not, before noise). What it observed is the closest thing to the canary
party's contribution its View gives: that contribution when it can open it (the plain
backend, or a coalition holding its keys), else the revealed sum minus every other
contribution it can open (a coalition of the aggregator and other clients subtracts its
own), else the sum alone, in which every other party's noise stays. An adversary that sees
neither scores every canary 0.
:mod:`fedsec.scoring.canaries` turns the scores into an empirical lower bound on epsilon.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fedsec.attacks.contribution_readout import revealed_sum
from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.privacy.canary import sign_scores
from fedsec.private_store import truth_key
from fedsec.protocols.secure_sum import (
    CANARY_DIMENSION,
    CANARY_INCLUDED,
    CANARY_NORM,
    CANARY_OFFSET,
    CANARY_PARTY,
    CANARY_SEED,
    canary_signs,
)
from fedsec.registry import register
from fedsec.transcript import Message
from fedsec.views import View

PAPER = "Steinke, Nasr and Jagielski, Privacy Auditing with One (1) Training Run, NeurIPS 2023"


def canary_meta(messages: Sequence[Message]) -> Mapping[str, Any] | None:
    """The canary metadata the contributions carry (None: the run inserted no canaries)."""
    return next((m.meta for m in messages if CANARY_SEED in m.meta), None)


def canary_residual(total: np.ndarray | None, holder: np.ndarray | None,
                    others: Sequence[np.ndarray]) -> tuple[np.ndarray | None, str]:
    """The best view of the canary party's contribution: its own (``holder``) when opened,
    else the sum minus the ``others`` the adversary opened, else None; and where it came from.

    Examples
    --------
    >>> residual, source = canary_residual(np.array([5.0, 5.0]), None, [np.array([1.0, 2.0])])
    >>> residual.tolist(), source
    ([4.0, 3.0], 'the sum minus 1 other contribution')
    >>> canary_residual(None, None, [])
    (None, 'nothing')
    """
    if holder is not None:
        return np.asarray(holder, dtype=float), "the canary party's contribution"
    if total is None:
        return None, "nothing"
    residual = np.asarray(total, dtype=float) - sum(
        (np.asarray(o, dtype=float) for o in others), np.zeros(np.shape(total)))
    if not others:
        return residual, "the sum"
    return residual, f"the sum minus {len(others)} other contribution{'s' * (len(others) > 1)}"


@register("attack", "canary-guess")
class CanaryGuess(Attack):
    """Scores each canary of secure-sum's canary mode from what the adversary saw (the one-run
    privacy audit's guesses).

    Score each canary of a secure sum in canary mode by its inner product with what the
    adversary observed of the canary party's contribution.
    """

    paper = PAPER
    default_scorer = "canary-epsilon"
    needs_tags = frozenset({CONTRIBUTION_TAG})
    closed_form = True
    produces = "values"

    def unmet(self, view: View) -> str | None:
        if canary_meta(view.select(tag=CONTRIBUTION_TAG)) is None:
            return ("the run inserted no canaries (run secure-sum with canaries = m for a "
                    "one-run privacy audit)")
        return None

    def run(self, view: View) -> Reconstruction:
        self.check(view)
        contributions = view.select(tag=CONTRIBUTION_TAG)
        meta = canary_meta(contributions) or {}  # empty: canary_signs says why
        signs = canary_signs(meta)
        holder_name = str(meta[CANARY_PARTY])
        holder, others = None, []
        for m in contributions:
            if not view.can_open(m):
                continue
            values = np.asarray(view.open(m), dtype=float)
            if m.sender == holder_name:
                holder = values
            else:
                others.append(values)
        residual, source = canary_residual(revealed_sum(view), holder, others)
        if residual is None:
            scores = np.zeros(signs.shape[0])
        else:
            start = int(meta[CANARY_OFFSET])
            block = residual[start:start + int(meta[CANARY_DIMENSION])]
            scores = sign_scores(block, signs, float(meta[CANARY_NORM]))
        key = truth_key(holder_name, "value", CANARY_INCLUDED)
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates={key: scores},
            baseline={key: np.zeros_like(scores)},
            info={"source": source, "n_canaries": int(signs.shape[0]),
                  "canary_dimension": int(meta[CANARY_DIMENSION]),
                  "contributions_seen": len(contributions),
                  "contributions_opened": len(others) + (holder is not None)},
        )
