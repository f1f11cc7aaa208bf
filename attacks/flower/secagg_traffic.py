"""A SecAgg+ round of a recorded Flower run, put back together from a View's rows.

Every SecAgg+ message is a Flower ``train`` message whose head row names its stage
(:data:`fedsec.protocols.flower.tags.SECAGG_STAGE`) and carries Flower's
``secaggplus_configs`` record as metadata (bytes as ``{"hex": ...}``). :func:`secagg_rounds`
reads, per round, what the observed messages say: the protocol's settings (setup
instruction), each client's public keys (setup replies), the encrypted shares each client
deals (share-keys replies), the masks each client applied (the sources of the shares
forwarded to it), the masked vectors and example counts (collect replies), the global model
each client was sent, and the seed shares of the unmask replies. Nothing here decrypts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedsec.attacks.flower.secagg_maths import ndarray_from_bytes
from fedsec.attacks.flower.traffic import FlowerMessage, flat, messages
from fedsec.protocols.flower import tags
from fedsec.view import View

# Flower's SecAgg+ config entries (flwr.common.secure_aggregation.secaggplus_constants.Key)
THRESHOLD, MOD_RANGE, TARGET_RANGE = "threshold", "mod_range", "target_range"
CLIPPING_RANGE, MAX_WEIGHT = "clipping_range", "max_weight"
PK1, PK2, DSTS, CTXTS, SRCS = "pk1", "pk2", "dsts", "ctxts", "srcs"
MASKED, NIDS, SHARES = "masked_params", "nids", "shares"
NUM_EXAMPLES = "num_examples"


def _bytes(value: Any) -> bytes:
    """A ConfigRecord bytes entry as the recorder wrote it (``{"hex": ...}``)."""
    return bytes.fromhex(value["hex"])


@dataclass
class SecAggRound:
    """What the adversary observed of one SecAgg+ round (nodes by Flower node id)."""

    round: int
    settings: dict[str, Any] = field(default_factory=dict)
    parties: dict[int, str] = field(default_factory=dict)
    public_keys: dict[int, tuple[bytes, bytes]] = field(default_factory=dict)
    ciphertexts: dict[tuple[int, int], bytes] = field(default_factory=dict)
    applied: dict[int, list[int]] = field(default_factory=dict)
    masked: dict[int, list[np.ndarray]] = field(default_factory=dict)
    examples: dict[int, float] = field(default_factory=dict)
    global_model: dict[int, np.ndarray] = field(default_factory=dict)
    seed_shares: dict[int, list[bytes]] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    """Nodes in the order their masked vectors were received."""

    @property
    def threshold(self) -> int:
        return int(self.settings.get(THRESHOLD, 0))

    def node_of(self, party: str) -> int | None:
        """The node id of a party, if it took part."""
        return next((n for n, p in self.parties.items() if p == party), None)


def _configs(message: FlowerMessage) -> Mapping[str, Any]:
    return (message.meta.get(tags.CONFIGS) or {}).get(tags.SECAGG_CONFIGS, {})


def _client_of(rounds: dict[int, SecAggRound], message: FlowerMessage,
               party: str) -> tuple[SecAggRound, int]:
    """The round of ``rounds`` that ``message`` belongs to (added when new) and the client node
    it names, recorded as ``party``."""
    r = rounds.setdefault(int(message.head.round), SecAggRound(int(message.head.round)))
    node = int(message.meta[tags.NODE_ID])
    r.parties[node] = party
    return r, node


def secagg_rounds(view: View) -> dict[int, SecAggRound]:
    """Every SecAgg+ round the view observed any stage of, by round."""
    rounds: dict[int, SecAggRound] = {}
    instructions = {m.message_id: m for m in messages(view, tags.TRAIN, tags.INSTRUCTION)}
    for m in instructions.values():
        stage = m.meta.get(tags.SECAGG_STAGE)
        if stage is None:
            continue
        r, node = _client_of(rounds, m, m.head.receiver)
        configs = _configs(m)
        if stage == tags.SETUP:
            r.settings = {k: v for k, v in configs.items() if k != tags.SECAGG_STAGE_ENTRY}
        elif stage == tags.COLLECT_MASKED_VECTORS:
            r.applied[node] = [int(s) for s in configs.get(SRCS, [])]
            for (source, ciphertext) in zip(configs.get(SRCS, []), configs.get(CTXTS, []),
                                            strict=True):
                r.ciphertexts.setdefault((int(source), node), _bytes(ciphertext))
            if m.arrays and not m.opaque:
                r.global_model[node] = flat(m.arrays)
        elif stage == tags.SHARE_KEYS:
            for key, value in configs.items():
                if key.isdigit():
                    r.public_keys.setdefault(int(key), (_bytes(value[0]), _bytes(value[1])))
    for m in messages(view, tags.TRAIN, tags.REPLY):
        stage = m.meta.get(tags.SECAGG_STAGE)
        if stage is None or tags.ERROR in m.meta:
            continue
        r, node = _client_of(rounds, m, m.head.sender)
        configs = _configs(m)
        if stage == tags.SETUP:
            r.public_keys[node] = (_bytes(configs[PK1]), _bytes(configs[PK2]))
        elif stage == tags.SHARE_KEYS:
            for destination, ciphertext in zip(configs.get(DSTS, []), configs.get(CTXTS, []),
                                               strict=True):
                r.ciphertexts[(node, int(destination))] = _bytes(ciphertext)
        elif stage == tags.COLLECT_MASKED_VECTORS:
            r.masked[node] = [ndarray_from_bytes(_bytes(b)) for b in configs[MASKED]]
            r.order.append(node)
            for record in (m.meta.get(tags.METRICS) or {}).values():
                if NUM_EXAMPLES in record:
                    r.examples[node] = float(record[NUM_EXAMPLES])
        elif stage == tags.UNMASK:
            for owner, share in zip(configs.get(NIDS, []), configs.get(SHARES, []),
                                    strict=True):
                r.seed_shares.setdefault(int(owner), []).append(_bytes(share))
    return rounds


def later_models(view: View) -> dict[int, np.ndarray]:
    """Round r → the global model after round r, as the server next sent it (an evaluate
    instruction of round r, or a train instruction of round r + 1)."""
    out: dict[int, np.ndarray] = {}
    for kind, shift in ((tags.EVALUATE, 0), (tags.TRAIN, -1)):
        for m in messages(view, kind, tags.INSTRUCTION):
            if m.arrays and not m.opaque:
                out.setdefault(int(m.head.round) + shift, flat(m.arrays))
    return out
