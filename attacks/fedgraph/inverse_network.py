"""Inverse-network attack on Hybrid FedGraph: test inputs from test embeddings, learned from
auxiliary pairs.

He, Zhang and Lee's query-free attack (ACSAC 2019): the adversary trains an inverse network
``f`` on pairs ``(g(x), x)`` and reads ``f(v)`` for each embedding ``v`` the client sends at
test time. Here the pairs are a coalition member's own training rows through its extractor
(``server,party2``: party2's extractor and training inputs leaked to the server, or party2
colludes; the same features, the same distribution). The test rows are never among the
pairs, so nothing is memorised: what ``f`` returns is what the embedding gives away about a
row the adversary never saw. Unlike the white-box inversion, the extractor is only queried,
never differentiated.

Estimates are the member's test inputs
(:data:`~fedsec.protocols.fedgraph.tags.TEST_INPUTS`); the baseline gives every test row the
mean of the auxiliary inputs (what the pairs alone tell about any row). Score with
``pixel-recovery``. The network trains on all but a held-out share of the pairs until the
held-out error stops improving for ``patience`` epochs, and the best epoch's weights are
kept; ``info["convergence"]`` judges that held-out error per epoch: ``budget`` when it was
still falling at the last allowed epoch.
The learned decoders of :mod:`.learned_decoder` (ridge, an MLP chosen on held-out pairs)
read the same View.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from fedsec import nn
from fedsec.attacks.fedgraph.decoder_params import DecoderTraining
from fedsec.attacks.fedgraph.family import LearnedInversion
from fedsec.attacks.fedgraph.inversion import apply_inverse, early_stop_judged, fit_inverse
from fedsec.attacks.fedgraph.observed import own_pairs
from fedsec.convergence import combine
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.view import View


@register("attack", "inverse-network")
class InverseNetwork(LearnedInversion):
    """FedGraph: an inverse network trained on a colluder's (input, embedding) pairs turns a
    client's test embeddings back into inputs (He et al.'s query-free attack).

    Query-free inversion of a client's test embeddings by a network trained on its rows.
    """

    @dataclass(frozen=True, kw_only=True)
    class Params(DecoderTraining):
        """The inverse network's capacity and early-stopped training."""

    def run(self, view: View) -> Reconstruction:
        p = self.params
        estimates, baseline = {}, {}
        pairs = 0
        records = []
        seed = self.seed_for(view)
        with nn.deterministic(seed):
            for i, own in enumerate(own_pairs(view, p.max_rows)):
                f, losses = fit_inverse(own.embeddings, own.inputs, hidden=p.hidden,
                                        epochs=p.epochs, lr=p.lr, batch_size=p.batch_size,
                                        validation=p.validation, patience=p.patience,
                                        seed=seed + i,
                                        on_epoch=functools.partial(
                                            self.report_progress, total=p.epochs, unit="epoch",
                                            label=f"{self.name} of {own.member}"))
                estimates[own.key], baseline[own.key] = apply_inverse(f, own.sent), own.baseline()
                pairs += len(own.inputs)
                records.append(early_stop_judged(losses, epochs=p.epochs, patience=p.patience))
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info={"auxiliary_pairs": pairs,
                                                       "epochs": p.epochs,
                                                       "convergence": combine(records).to_info()})
