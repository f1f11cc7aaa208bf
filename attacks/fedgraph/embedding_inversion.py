"""Embedding inversion on Hybrid FedGraph: a client's inputs from the embeddings it sends.

At test time every client sends the server raw embeddings ``g^j(x)`` of the test rows (and
of its training rows when ``clustering`` is ``none`` or ``kmeans``; cluster-mean embeddings
under ``crc`` and ``random``). The server, joined by the extractor's weights, inverts them:
He et al.'s white-box attack (ACSAC 2019), the inputs in the pixel box minimising
``||g(x) - v||²``, solved per row by box-constrained Gauss–Newton (:mod:`.gauss_newton`)
instead of the paper's Adam steps, which stop far from the optimum; a cluster mean inverts to
a prototype, scored against the mean of the cluster's true inputs. The weights come from a
coalition member: the threat model ``server,party2`` stands for "party2's extractor leaked
to the server" (a colluding client that holds the same features and trains the same way, or
the audit's worst case). The attack reads that member's extractor, the embeddings it sent,
and, for its starting points, the member's own training inputs when the View holds them
(``value/`` :data:`~fedsec.protocols.fedgraph.tags.TRAIN_INPUTS`), never the rows it attacks.

Starting points (``starts``, tried in order, each on the rows the earlier ones left above
the float32 floor; every row keeps the start that ends at its lowest objective):

* ``nearest:k``: the member's own training rows whose embeddings are nearest to the row's
  embedding (the first, second, ... ``k``-th nearest: ``k`` starts);
* ``prior``: the mean of the member's own training rows (the adversary's prior);
* ``zero``: the middle of the pixel box.

``nearest`` and ``prior`` need the member's training inputs and serve only the test rows:
the member's raw training embeddings and cluster means are of those very rows, so starting
from them would hand the attack what it is scored on; those run from ``zero`` alone, as does
every source when the View holds no training inputs (and ``zero`` runs whenever no listed start
applies). The Reconstruction's ``info["convergence"]`` says how the runs ended
(:mod:`fedsec.convergence`) and ``info["starts_kept"]`` how many rows each start won.

Estimates are the member's test inputs (:data:`~fedsec.protocols.fedgraph.tags.TEST_INPUTS`),
its training inputs when sent raw (in its own row order), and its clusters' mean inputs
(:data:`~fedsec.protocols.fedgraph.tags.CLUSTER_INPUTS`) when it sent cluster means; the
baseline gives every row the mean of the attack's own estimates (the same pixels for every
row: what is left when nothing identifies a row). ``sources`` picks what to invert (``test``,
``train``, ``clusters``; all by default). Score with ``pixel-recovery``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import numpy as np

from fedsec import nn
from fedsec.attacks.fedgraph.family import FedGraphAttack
from fedsec.attacks.fedgraph.gauss_newton import invert_from_starts, relu_layers
from fedsec.attacks.fedgraph.inversion import embed, extractor_from
from fedsec.attacks.fedgraph.observed import LAYOUT, WEIGHTS, leaked_extractors, sent_matrix
from fedsec.convergence import Convergence, combine
from fedsec.declare import Declared, Int, owner_of
from fedsec.outcomes import Reconstruction
from fedsec.private_store import held_value, value_key
from fedsec.protocols.fedgraph import tags
from fedsec.registry import register
from fedsec.validation import param_error
from fedsec.view import View

SOURCES = {tags.TEST_EMBEDDINGS: tags.TEST_INPUTS, tags.TRAIN_EMBEDDINGS: tags.TRAIN_INPUTS,
           tags.CLUSTER_EMBEDDINGS: tags.CLUSTER_INPUTS}
NAMED = {"test": tags.TEST_EMBEDDINGS, "train": tags.TRAIN_EMBEDDINGS,
         "clusters": tags.CLUSTER_EMBEDDINGS}
OWN_INPUTS = held_value(tags.TRAIN_INPUTS)
START_KINDS = ("nearest", "prior", "zero")


def parse_starts(text: str, *, owner: str = "parse_starts") -> list[tuple[str, int]]:
    """``"nearest:5,prior,zero"`` as ``[("nearest", 5), ("prior", 1), ("zero", 1)]``; a refusal
    names ``owner``.

    Examples
    --------
    >>> parse_starts("nearest:2,zero")
    [('nearest', 2), ('zero', 1)]
    >>> parse_starts("zero,zero")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedsec.errors.ValidationError: The 'starts' parameter of parse_starts must be a comma-sep...
    """
    parsed: list[tuple[str, int]] = []
    for item in text.split(","):
        kind, _, count = item.strip().partition(":")
        if kind not in START_KINDS or (count and not count.isdigit()) or count == "0" or (
                count and kind != "nearest"):
            parsed = []
            break
        parsed.append((kind, int(count or 1)))
    if not parsed or len({kind for kind, _ in parsed}) < len(parsed):
        raise param_error(owner, "starts", "a comma-separated list of nearest:k (k >= 1), prior "
                          "and zero, each at most once", text)
    return parsed


def start_points(kinds: list[tuple[str, int]], embeddings: np.ndarray, dim: int,
                 own_inputs: np.ndarray | None, own_embeddings: np.ndarray | None
                 ) -> list[tuple[str, np.ndarray]]:
    """The starting points, each a ``(label, (n, dim) inputs)``; ``nearest`` and ``prior``
    only with the member's own training inputs (and their embeddings).

    Examples
    --------
    >>> own = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> points = start_points([("nearest", 1), ("prior", 1), ("zero", 1)],
    ...                       np.array([[0.9, 0.1]]), 2, own, own)
    >>> [(label, x.tolist()) for label, x in points]
    [('nearest:1', [[1.0, 0.0]]), ('prior', [[0.5, 0.5]]), ('zero', [[0.0, 0.0]])]
    """
    n = len(embeddings)
    points = []
    for kind, count in kinds:
        if kind == "zero":
            points.append(("zero", np.zeros((n, dim))))
        elif own_inputs is None or own_embeddings is None or len(own_inputs) == 0:
            continue
        elif kind == "prior":
            points.append(("prior", np.repeat(own_inputs.mean(axis=0, keepdims=True), n, 0)))
        else:
            d2 = ((embeddings[:, None, :] - own_embeddings[None, :, :]) ** 2).sum(axis=2)
            order = np.argsort(d2, axis=1, kind="stable")
            points += [(f"nearest:{i + 1}", own_inputs[order[:, i]])
                       for i in range(min(count, len(own_inputs)))]
    return points


@register("attack", "embedding-inversion")
class EmbeddingInversion(FedGraphAttack):
    """FedGraph: invert a client's raw embeddings with its extractor's weights (He et al.'s
    white-box model inversion, solved by box-constrained Gauss-Newton from several starts).

    White-box inversion of the embeddings a client sends (its extractor leaked).
    """

    default_scorer = "pixel-recovery"
    budget_params = ("steps",)
    needs_any_tags = frozenset(SOURCES)

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        steps: Annotated[int, Int(min=1)] = 1000
        """Gauss-Newton (Levenberg-Marquardt) steps at most per row and start; a row stops
        earlier at its float32 floor or when no step lowers its objective."""
        starts: str = "nearest:5,prior,zero"
        """Starting points, tried in order on the rows still above their floor: nearest:k
        (the k own training rows nearest in embedding space), prior (their mean), zero."""
        max_rows: Annotated[int, Int(min=1)] = 200
        """Embeddings inverted at most per client and source (the first ones sent)."""
        sources: str = "test,train,clusters"
        """What to invert, a comma-separated subset of test, train (raw training embeddings) and
        clusters (cluster-mean embeddings)."""

        def __post_init__(self) -> None:  # two lists in a string: no declared kind says so
            owner = owner_of(self)
            if not self.sources or set(self.sources.split(",")) - set(NAMED):
                raise param_error(owner, "sources", "a comma-separated subset of "
                                  + ", ".join(map(repr, NAMED)), self.sources)
            parse_starts(self.starts, owner=owner)

    def unmet(self, view: View) -> str | None:
        if not leaked_extractors(view, self._sources()):
            return (f"{view.threat} holds no client's extractor whose embeddings it observed: "
                    "join the server with the client whose extractor leaked "
                    "(for example 'server,party1')")
        return None

    def _sources(self) -> dict[str, str]:
        """The tags to invert (``sources``) and the truth each is scored against."""
        chosen = {NAMED[name] for name in self.params.sources.split(",")}
        return {tag: truth for tag, truth in SOURCES.items() if tag in chosen}

    def _start_progress(self, name: str, steps: int, label: str) -> Callable[[int], None]:
        """What follows the steps of one start of ``name``'s inversion."""
        return functools.partial(self.report_progress, total=steps, unit="step",
                                 label=f"{self.name} of {name} from {label}")

    def run(self, view: View) -> Reconstruction:
        p = self.params
        estimates, baseline = {}, {}
        records: list[Convergence] = []
        kept_total: dict[str, int] = {}
        inverted = 0
        with nn.deterministic(0):
            for name in leaked_extractors(view, self._sources()):
                held = view.own(name)
                g = extractor_from(held, WEIGHTS, LAYOUT)
                layers = relu_layers(g)
                own = (np.asarray(held[OWN_INPUTS], dtype=np.float64)
                       if OWN_INPUTS in held else None)
                own_embeddings = embed(g, own) if own is not None else None
                for tag, truth in self._sources().items():
                    sent = sent_matrix(view, tag, name)
                    if sent is None:
                        continue
                    v = np.asarray(sent[:p.max_rows], dtype=np.float64)
                    prior = tag == tags.TEST_EMBEDDINGS  # the others are the own rows
                    points = start_points(parse_starts(p.starts), v, layers[0][0].shape[1],
                                          own if prior else None,
                                          own_embeddings if prior else None)
                    if not points:
                        points = [("zero", np.zeros((len(v), layers[0][0].shape[1])))]
                    x, record, kept = invert_from_starts(
                        layers, v, points, steps=p.steps,
                        on_start=functools.partial(self._start_progress, name, p.steps))
                    key = value_key(name, truth)
                    estimates[key] = x
                    baseline[key] = np.repeat(x.mean(axis=0, keepdims=True), len(x), axis=0)
                    records.append(record)
                    for label, count in kept.items():
                        kept_total[label] = kept_total.get(label, 0) + count
                    inverted += len(x)
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates=estimates, baseline=baseline,
            info={"rows_inverted": inverted, "steps": p.steps, "starts": p.starts,
                  "starts_kept": kept_total, "convergence": combine(records).to_info()})
