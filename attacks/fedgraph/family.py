"""What the attacks on Hybrid FedGraph declare alike: the family's paper, and, for the
inversions learned on a colluder's own pairs, what they read and how hard they try.

The attacks on the family derive from :class:`FedGraphAttack` and state only what is their
own; ``inverse-network`` and ``learned-decoder`` derive from :class:`LearnedInversion`.
"""

from __future__ import annotations

from fedsec.attacks.fedgraph.observed import no_pairs_reason
from fedsec.interfaces import Attack
from fedsec.protocols.fedgraph import tags
from fedsec.protocols.fedgraph.setup import PAPER
from fedsec.view import View


class FedGraphAttack(Attack):
    """An attack on Hybrid FedGraph, from the family's paper."""

    paper = PAPER


class LearnedInversion(FedGraphAttack):
    """A client's test embeddings read back as inputs by a model fitted on a colluder's own
    (input, embedding) pairs (:func:`~fedsec.attacks.fedgraph.observed.own_pairs`); its budget
    is the training's epochs and patience."""

    default_scorer = "pixel-recovery"
    budget_params = ("epochs", "patience")
    needs_any_tags = frozenset({tags.TEST_EMBEDDINGS})

    def unmet(self, view: View) -> str | None:
        return no_pairs_reason(view)
