"""What a FedGraph View holds: the matrices a client sent, and the extractors that leaked.

Shared by the attacks on FedGraph; they read only the View.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.attacks.fedgraph.inversion import embed, extractor_from
from fedsec.private_store import held_value, value_key
from fedsec.protocols.fedgraph import tags
from fedsec.view import View

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.transcript.message import Message

WEIGHTS = held_value(tags.EXTRACTOR_WEIGHTS)
LAYOUT = held_value(tags.EXTRACTOR_LAYOUT)
AUXILIARY = held_value(tags.TRAIN_INPUTS)
"""A member's own training inputs: with its extractor, the pairs a learned inversion fits."""


def opened(view: View, message: Message) -> Any:
    """A readable payload as it was sent: a masking backend's values travel flat, with their
    shape in the metadata, and a seed's bytes one value per byte."""
    values = view.open(message)
    if isinstance(values, bytes) or message.protection == "plain":
        return values
    if message.tag == tags.CLUSTER_SEED:
        return np.rint(np.asarray(values)).astype(np.uint8).tobytes()
    if tags.SHAPE in message.meta:
        return np.asarray(values).reshape([int(n) for n in message.meta[tags.SHAPE]])
    return values


def sent_matrix(view: View, tag: str, sender: str) -> np.ndarray | None:
    """Every row ``sender`` sent under ``tag`` in one matrix (None: nothing observed).

    Messages that name their training rows (:data:`~fedsec.protocols.fedgraph.tags.ROWS`)
    are put in the order of those ids, which is the client's own row order; others (cluster
    means) stay in the order they were sent.
    """
    sent = [m for m in view.select(tag=tag, sender=sender) if view.can_open(m)]
    if not sent:
        return None
    X = np.concatenate([np.atleast_2d(np.asarray(opened(view, m))) for m in sent])
    if all(tags.ROWS in m.meta for m in sent):
        ids = np.concatenate([np.asarray(m.meta[tags.ROWS], dtype=np.int64) for m in sent])
        X = X[np.argsort(ids, kind="stable")]
    return X


def leaked_extractors(view: View, sent_tags: Iterable[str]) -> list[str]:
    """Coalition members whose extractor the View holds and who sent one of ``sent_tags``."""
    wanted = set(sent_tags)
    senders = {m.sender for m in view.messages if m.tag in wanted}
    return [name for name in view.knowledge
            if name in senders and WEIGHTS in view.knowledge[name]]


def colluders_with_pairs(view: View) -> list[str]:
    """Members whose extractor and training inputs (the pairs to fit an inversion on) the View
    holds, and who sent test embeddings."""
    return [name for name in leaked_extractors(view, {tags.TEST_EMBEDDINGS})
            if AUXILIARY in view.knowledge[name]]


def no_pairs_reason(view: View) -> str | None:
    """Why a learned inversion cannot run on ``view`` (None: it can)."""
    if colluders_with_pairs(view):
        return None
    return (f"{view.threat} holds no client's extractor and training inputs (the pairs to fit) "
            "together with its test embeddings: join the server with a colluding client (for "
            "example 'server,party1')")


@dataclass(frozen=True)
class OwnPairs:
    """A colluder's own (embedding, input) pairs, to fit a decoder on, and the test embeddings
    it sent, to read back as inputs."""

    member: str
    embeddings: np.ndarray
    inputs: np.ndarray
    sent: np.ndarray

    @property
    def key(self) -> str:
        """The truth key of the member's test inputs, which decoding ``sent`` estimates."""
        return value_key(self.member, tags.TEST_INPUTS)

    def baseline(self) -> np.ndarray:
        """The guess without the attack: the mean of the pairs' inputs for every test row."""
        return np.repeat(self.inputs.mean(axis=0, keepdims=True), len(self.sent), axis=0)


def own_pairs(view: View, max_rows: int) -> Iterator[OwnPairs]:
    """Each of :func:`colluders_with_pairs` in turn: its training inputs through its own
    extractor, and the first ``max_rows`` test embeddings it sent."""
    for name in colluders_with_pairs(view):
        held = view.own(name)
        inputs = np.asarray(held[AUXILIARY], dtype=np.float64)
        embeddings = embed(extractor_from(held, WEIGHTS, LAYOUT), inputs)
        sent = sent_matrix(view, tags.TEST_EMBEDDINGS, name)
        assert sent is not None  # colluders_with_pairs keeps senders of test embeddings
        yield OwnPairs(name, embeddings, inputs, sent[:max_rows])
