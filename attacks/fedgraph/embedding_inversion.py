"""Embedding inversion on Hybrid FedGraph: a client's inputs from the embeddings it sends.

At test time every client sends the server raw embeddings ``g^j(x)`` of the test rows (and
of its training rows when ``clustering`` is ``none`` or ``kmeans``; cluster-mean embeddings
under ``crc`` and ``random``). The server, joined by the extractor's weights, inverts them
(:func:`.inversion.invert`, He et al.'s white-box attack); a cluster mean inverts to a
prototype, scored against the mean of the cluster's true inputs. The weights come from a
coalition member: the threat model ``server,party2`` stands for "party2's extractor leaked
to the server" (a colluding client that holds the same features and trains the same way, or
the audit's worst case). The attack reads only that member's extractor and the embeddings it
sent, never the member's data.

Estimates are the member's test inputs (:data:`~fedsec.protocols.fedgraph.tags.TEST_INPUTS`),
its training inputs when sent raw (in its own row order), and its clusters' mean inputs
(:data:`~fedsec.protocols.fedgraph.tags.CLUSTER_INPUTS`) when it sent cluster means; the
baseline gives every row the mean of the attack's own estimates (the same pixels for every
row: what is left when nothing identifies a row). ``sources`` picks what to invert (``test``,
``train``, ``clusters``; all by default). Score with ``pixel-recovery``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedsec.attacks.fedgraph.inversion import extractor_from, invert
from fedsec.attacks.fedgraph.observed import LAYOUT, WEIGHTS, leaked_extractors, sent_matrix
from fedsec.errors import ValidationError
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import truth_key
from fedsec.protocols.fedgraph import tags
from fedsec.protocols.fedgraph.setup import PAPER
from fedsec.registry import register
from fedsec.validation import check_float, check_int
from fedsec.view import View

OWNER = "attack 'embedding-inversion'"
SOURCES = {tags.TEST_EMBEDDINGS: tags.TEST_INPUTS, tags.TRAIN_EMBEDDINGS: tags.TRAIN_INPUTS,
           tags.CLUSTER_EMBEDDINGS: tags.CLUSTER_INPUTS}
NAMED = {"test": tags.TEST_EMBEDDINGS, "train": tags.TRAIN_EMBEDDINGS,
         "clusters": tags.CLUSTER_EMBEDDINGS}


@register("attack", "embedding-inversion")
class EmbeddingInversion(Attack):
    """White-box inversion of the embeddings a client sends (its extractor leaked)."""

    summary = ("FedGraph: invert a client's raw embeddings with its extractor's weights "
               "(He et al.'s white-box model inversion).")
    paper = PAPER
    default_scorer = "pixel-recovery"
    needs_any_tags = frozenset(SOURCES)

    @dataclass(frozen=True, kw_only=True)
    class Params:
        steps: int = 300
        """Adam steps of the inversion."""
        lr: float = 0.05
        """Adam learning rate of the inversion."""
        max_rows: int = 200
        """Embeddings inverted at most per client and source (the first ones sent)."""
        sources: str = "test,train,clusters"
        """What to invert, a comma-separated subset of test, train (raw training embeddings) and
        clusters (cluster-mean embeddings)."""

        def __post_init__(self) -> None:
            unknown = sorted(set(self.sources.split(",")) - set(NAMED))
            if unknown or not self.sources:
                raise ValidationError(
                    f"{OWNER}: sources={self.sources!r} names {', '.join(unknown) or 'nothing'}"
                    f"; choose a comma-separated subset of {', '.join(NAMED)}.")
            check_int(self.steps, owner=OWNER, name="steps", min_value=1)
            check_int(self.max_rows, owner=OWNER, name="max_rows", min_value=1)
            check_float(self.lr, owner=OWNER, name="lr", min_value=0.0, min_inclusive=False)

    def not_applicable(self, view: View) -> str | None:
        reason = super().not_applicable(view)
        if reason is not None:
            return reason
        if not leaked_extractors(view, self._sources()):
            return (f"{view.threat} holds no client's extractor whose embeddings it observed: "
                    "join the server with the client whose extractor leaked "
                    "(for example 'server,party1')")
        return None

    def _sources(self) -> dict[str, str]:
        """The tags to invert (``sources``) and the truth each is scored against."""
        chosen = {NAMED[name] for name in self.params.sources.split(",")}
        return {tag: truth for tag, truth in SOURCES.items() if tag in chosen}

    def run(self, view: View) -> Reconstruction:
        self.check(view)
        p = self.params
        estimates, baseline = {}, {}
        inverted = 0
        for name in leaked_extractors(view, self._sources()):
            g = extractor_from(view.own(name), WEIGHTS, LAYOUT)
            for tag, truth in self._sources().items():
                sent = sent_matrix(view, tag, name)
                if sent is None:
                    continue
                v = sent[:p.max_rows]
                x = invert(g, v, steps=p.steps, lr=p.lr,
                           on_step=lambda s, n=name: self.report_progress(
                               s, p.steps, "step", label=f"{self.name} of {n}"))
                key = truth_key(name, "value", *truth.split("/"))
                estimates[key] = x
                baseline[key] = np.repeat(x.mean(axis=0, keepdims=True), len(x), axis=0)
                inverted += len(x)
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info={"rows_inverted": inverted,
                                                       "steps": p.steps})
