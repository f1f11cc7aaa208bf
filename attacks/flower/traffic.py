"""Flower messages put back together from a View's rows (:mod:`fedsec.protocols.flower.tags`).

A recorded Flower message is a head row and its array rows, linked by the message id in
their metadata. :func:`messages` regroups them; :func:`update_of` is a client's update (its
reply's arrays minus the instruction's it answered), flattened as the truth mod flattens it.
Only what the adversary observed and can open is used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedsec.protocols.flower import tags
from fedsec.transcript import Message
from fedsec.view import View


@dataclass(frozen=True)
class FlowerMessage:
    """One Flower message as observed: its head row and its arrays (record, name, value) in
    order; ``opaque`` counts array rows the adversary could not open."""

    head: Message
    arrays: list[tuple[str, str, np.ndarray]] = field(default_factory=list)
    opaque: int = 0

    @property
    def message_id(self) -> str:
        return str(self.head.meta.get(tags.MESSAGE_ID, ""))

    @property
    def meta(self) -> Any:
        return self.head.meta


def messages(view: View, message_type: str, direction: str) -> list[FlowerMessage]:
    """The observed messages of ``message_type`` going ``direction``, in transcript order."""
    heads = view.select(tag=tags.message_tag(message_type, direction))
    prefix = tags.message_tag(message_type, direction) + "."
    parts: dict[str, list[Message]] = {}
    for m in view.messages:
        if m.tag.startswith(prefix):
            parts.setdefault(str(m.meta.get(tags.MESSAGE_ID, "")), []).append(m)
    out = []
    for head in heads:
        arrays, opaque = [], 0
        key = str(head.meta.get(tags.MESSAGE_ID, ""))
        for row in sorted(parts.get(key, []), key=lambda r: r.seq):
            if row.sender != head.sender or row.receiver != head.receiver:
                continue
            if not view.can_open(row):
                opaque += 1
                continue
            arrays.append((str(row.meta.get(tags.RECORD)), str(row.meta.get(tags.ARRAY)),
                           np.asarray(view.open(row))))
        out.append(FlowerMessage(head, arrays, opaque))
    return out


def flat(arrays: list[tuple[str, str, np.ndarray]]) -> np.ndarray:
    """Arrays flattened to one float64 vector, in order."""
    if not arrays:
        return np.zeros(0)
    return np.concatenate([np.asarray(a, dtype=np.float64).ravel() for _, _, a in arrays])


def update_of(reply: FlowerMessage, instruction: FlowerMessage | None) -> np.ndarray:
    """The reply's arrays minus the instruction's (matched by record and name; an array the
    instruction lacks counts in full), flattened as :func:`.client.record_plaintext` does."""
    sent = {} if instruction is None else {(r, n): a for r, n, a in instruction.arrays}
    parts = []
    for record, name, value in reply.arrays:
        own = np.asarray(value, dtype=np.float64).ravel()
        before = sent.get((tags.LEGACY_INSTRUCTION_RECORD.get(record, record), name))
        if before is not None and before.shape == value.shape:
            own = own - np.asarray(before, dtype=np.float64).ravel()
        parts.append(own)
    return np.concatenate(parts) if parts else np.zeros(0)
