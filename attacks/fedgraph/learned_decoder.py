"""Learned-decoder attack on Hybrid FedGraph: test inputs from test embeddings, by a decoder
fitted on a colluder's own (embedding, input) pairs.

Beside He, Zhang and Lee's inverse network (:mod:`.inverse_network`, ACSAC 2019), two
decoders whose capacity is chosen on the colluder's own held-out pairs (:mod:`.decoders`):

- ``ridge``: ridge regression from embedding to input, in closed form, its penalty chosen by
  cross-validation on the pairs (``folds``);
- ``mlp``: an MLP on standardised embeddings, kept at the epoch of lowest error on a held-out
  share of the pairs (``validation``).

The pairs are a coalition member's own training rows through its extractor (``server,party2``:
party2's extractor and training inputs leaked to the server, or party2 colludes); the test
rows are never among them, nor used to choose anything. Estimates are the member's test inputs
(:data:`~fedsec.protocols.fedgraph.tags.TEST_INPUTS`); the baseline gives every test row the
mean of the pairs' inputs. Score with ``pixel-recovery``. ``info["convergence"]``: the closed
form for ``ridge``; for ``mlp``, the held-out error per epoch judged by
:func:`~fedsec.attacks.fedgraph.inversion.early_stop_judged` (``budget`` when it was still
falling at the last allowed epoch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np

from fedsec import nn
from fedsec.attacks.fedgraph.decoder_params import DecoderTraining
from fedsec.attacks.fedgraph.decoders import decode, fit_mlp, fit_ridge
from fedsec.attacks.fedgraph.inversion import early_stop_judged, embed, extractor_from
from fedsec.attacks.fedgraph.observed import (
    AUXILIARY,
    LAYOUT,
    WEIGHTS,
    colluders_with_pairs,
    no_pairs_reason,
    sent_matrix,
)
from fedsec.convergence import CLOSED_FORM, combine
from fedsec.declare import Choice, Int
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import value_key
from fedsec.protocols.fedgraph import tags
from fedsec.protocols.fedgraph.setup import PAPER
from fedsec.registry import register
from fedsec.view import View

DECODERS = ("ridge", "mlp")


@register("attack", "learned-decoder")
class LearnedDecoder(Attack):
    """A decoder fitted on a colluder's own (embedding, input) pairs reads a client's test
    embeddings back as inputs."""

    summary = ("FedGraph: a ridge or MLP decoder fitted on a colluder's own (embedding, input) "
               "pairs, its capacity chosen on held-out pairs, turns a client's test embeddings "
               "back into inputs.")
    paper = PAPER
    default_scorer = "pixel-recovery"
    budget_params = ("epochs", "patience")
    needs_any_tags = frozenset({tags.TEST_EMBEDDINGS})

    @dataclass(frozen=True, kw_only=True)
    class Params(DecoderTraining):
        decoder: Annotated[str, Choice(*DECODERS)] = "ridge"
        """ridge (closed form, penalty by cross-validation) or mlp (the early-stopped MLP;
        ``hidden``, ``epochs``, ``patience``, ``validation``, ``lr`` and ``batch_size``
        are its training)."""
        folds: Annotated[int, Int(min=2)] = 5
        """Cross-validation folds choosing the ridge penalty (ridge)."""

    def not_applicable(self, view: View) -> str | None:
        return super().not_applicable(view) or no_pairs_reason(view)

    def run(self, view: View) -> Reconstruction:
        p = self.params
        estimates, baseline, chosen = {}, {}, {}
        records = []
        with nn.deterministic(p.seed):
            for i, name in enumerate(colluders_with_pairs(view)):
                held = view.own(name)
                g = extractor_from(held, WEIGHTS, LAYOUT)
                aux = np.asarray(held[AUXILIARY], dtype=np.float64)
                pairs = embed(g, aux)
                if p.decoder == "ridge":
                    model = fit_ridge(pairs, aux, folds=p.folds, seed=p.seed + i)
                    records.append(CLOSED_FORM)
                else:
                    model = fit_mlp(pairs, aux, hidden=p.hidden, epochs=p.epochs, lr=p.lr,
                                    batch_size=p.batch_size, validation=p.validation,
                                    patience=p.patience, seed=p.seed + i)
                    records.append(early_stop_judged(list(model.validation), epochs=p.epochs,
                                                     patience=p.patience))
                sent = sent_matrix(view, tags.TEST_EMBEDDINGS, name)
                assert sent is not None  # colluders_with_pairs keeps senders of test embeddings
                key = value_key(name, tags.TEST_INPUTS)
                estimates[key] = decode(model, sent[:p.max_rows])
                baseline[key] = np.repeat(aux.mean(axis=0, keepdims=True),
                                          len(estimates[key]), axis=0)
                chosen[name] = model.chosen
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates=estimates, baseline=baseline,
            info={"decoder": p.decoder, "chosen": chosen,
                  "chosen_is": "alpha" if p.decoder == "ridge" else "epoch",
                  "convergence": combine(records).to_info()})
