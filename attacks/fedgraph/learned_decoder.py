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

from fedsec import nn
from fedsec.attacks.fedgraph.decoder_params import DecoderTraining
from fedsec.attacks.fedgraph.decoders import decode, fit_mlp, fit_ridge
from fedsec.attacks.fedgraph.family import LearnedInversion
from fedsec.attacks.fedgraph.inversion import early_stop_judged
from fedsec.attacks.fedgraph.observed import own_pairs
from fedsec.convergence import CLOSED_FORM, combine
from fedsec.declare import Choice, Int
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.view import View

DECODERS = ("ridge", "mlp")


@register("attack", "learned-decoder")
class LearnedDecoder(LearnedInversion):
    """FedGraph: a ridge or MLP decoder fitted on a colluder's own (embedding, input) pairs, its
    capacity chosen on held-out pairs, turns a client's test embeddings back into inputs.

    A decoder fitted on a colluder's own (embedding, input) pairs reads a client's test
    embeddings back as inputs.
    """

    @dataclass(frozen=True, kw_only=True)
    class Params(DecoderTraining):
        decoder: Annotated[str, Choice(*DECODERS)] = "ridge"
        """ridge (closed form, penalty by cross-validation) or mlp (the early-stopped MLP;
        ``hidden``, ``epochs``, ``patience``, ``validation``, ``lr`` and ``batch_size``
        are its training)."""
        folds: Annotated[int, Int(min=2)] = 5
        """Cross-validation folds choosing the ridge penalty (ridge)."""

    def run(self, view: View) -> Reconstruction:
        p = self.params
        estimates, baseline, chosen = {}, {}, {}
        records = []
        seed = self.seed_for(view)
        with nn.deterministic(seed):
            for i, own in enumerate(own_pairs(view, p.max_rows)):
                if p.decoder == "ridge":
                    model = fit_ridge(own.embeddings, own.inputs, folds=p.folds, seed=seed + i)
                    records.append(CLOSED_FORM)
                else:
                    model = fit_mlp(own.embeddings, own.inputs, hidden=p.hidden,
                                    epochs=p.epochs, lr=p.lr, batch_size=p.batch_size,
                                    validation=p.validation, patience=p.patience,
                                    seed=seed + i)
                    records.append(early_stop_judged(list(model.validation), epochs=p.epochs,
                                                     patience=p.patience))
                estimates[own.key], baseline[own.key] = decode(model, own.sent), own.baseline()
                chosen[own.member] = model.chosen
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates=estimates, baseline=baseline,
            info={"decoder": p.decoder, "chosen": chosen,
                  "chosen_is": "alpha" if p.decoder == "ridge" else "epoch",
                  "convergence": combine(records).to_info()})
