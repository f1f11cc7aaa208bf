"""Read each Flower client's update from what the server was sent.

The attack secure aggregation exists to stop (Bonawitz et al., CCS 2017), on a real Flower
run: a ServerApp running plain FedAvg receives every client's locally trained model, so it
reads each client's update (the reply's arrays minus the global model it sent that client)
exactly. An update the adversary cannot open (masked by SecAgg+, or on a link it does not
observe) falls back to the naive baseline: the round's mean update, the aggregate's change of
the global model, which is all a correctly protected sum reveals about one client.

Targets are ``party/<client>/value/update/round<r>``, the plaintext updates
:func:`fedsec.protocols.flower.client.record_plaintext` recorded before protection.
"""

from __future__ import annotations

import numpy as np

from fedsec.attacks.flower.traffic import FlowerMessage, flat, messages, update_of
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import value_key
from fedsec.protocols.flower import tags
from fedsec.registry import register
from fedsec.view import View


def _round(message: FlowerMessage) -> int:
    return int(message.head.round)


def mean_update(global_before: np.ndarray, global_after: np.ndarray | None,
                readable: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """The baseline for one client's update: the change of the global model the round made
    (observed in the next model the server sent), or, when no later model was sent, the
    example-weighted mean of the updates the server read (the same aggregate).

    >>> mean_update(np.zeros(2), np.ones(2), []).tolist()
    [1.0, 1.0]
    >>> mean_update(np.zeros(2), None, [(np.ones(2), 1.0), (np.zeros(2), 3.0)]).tolist()
    [0.25, 0.25]
    """
    if global_after is not None and global_after.shape == global_before.shape:
        return global_after - global_before
    if readable:
        weights = np.array([w for _, w in readable], dtype=np.float64)
        stacked = np.stack([u for u, _ in readable])
        return (weights[:, None] * stacked).sum(axis=0) / weights.sum()
    return np.zeros_like(global_before)


@register("attack", "flower-update-readout")
class FlowerUpdateReadout(Attack):
    """Reads each Flower client's model update from the train replies the server received (exact
    without SecAgg+).

    Take each client's Flower train reply at face value when it is readable.
    """

    paper = "Bonawitz et al., Practical Secure Aggregation for Privacy-Preserving ML, CCS 2017"
    needs_tags = frozenset({tags.TRAIN_REPLY})
    closed_form = True
    produces = "values"

    def run(self, view: View) -> Reconstruction:
        instructions = {m.message_id: m for m in messages(view, tags.TRAIN, tags.INSTRUCTION)}
        later_models: dict[int, np.ndarray] = {}  # round r -> global model after round r
        for kind, shift in ((tags.EVALUATE, 0), (tags.TRAIN, -1)):
            for m in messages(view, kind, tags.INSTRUCTION):
                if m.arrays and not m.opaque:
                    later_models.setdefault(_round(m) + shift, flat(m.arrays))
        # under SecAgg+ only the collect stage's reply carries (masked) model content
        replies = [m for m in messages(view, tags.TRAIN, tags.REPLY)
                   if m.head.sender not in view.knowledge and tags.ERROR not in m.meta
                   and m.meta.get(tags.SECAGG_STAGE, tags.COLLECT_MASKED_VECTORS)
                   == tags.COLLECT_MASKED_VECTORS]
        by_round: dict[int, list[FlowerMessage]] = {}
        for m in replies:
            by_round.setdefault(_round(m), []).append(m)
        estimates, baseline = {}, {}
        n_read = n_opaque = 0
        for server_round, group in sorted(by_round.items()):
            read: dict[str, np.ndarray] = {}
            weights: list[tuple[np.ndarray, float]] = []
            before = None
            for m in group:
                instruction = instructions.get(str(m.meta.get(tags.REPLY_TO, "")))
                if instruction is not None and before is None and instruction.arrays:
                    before = flat(instruction.arrays)
                if m.arrays and not m.opaque:
                    update = update_of(m, instruction)
                    read[m.head.sender] = update
                    weights.append((update, _examples(m)))
                else:
                    n_opaque += 1
            length = next((u.size for u in read.values()), 0 if before is None else before.size)
            start = np.zeros(length) if before is None else before
            guess = mean_update(start, later_models.get(server_round), weights)
            for m in group:
                key = value_key(m.head.sender, tags.update_key(server_round))
                baseline[key] = guess
                estimates[key] = read.get(m.head.sender, guess)
            n_read += len(read)
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates=estimates, baseline=baseline,
            info={"replies_seen": len(replies), "readable": n_read, "opaque": n_opaque,
                  "rounds": sorted(by_round)})


def _examples(message: FlowerMessage) -> float:
    """The example count a reply reports (FedAvg's weight), 1 when it reports none."""
    for record in (message.meta.get(tags.METRICS) or {}).values():
        value = record.get("num-examples")
        if isinstance(value, (int, float)):
            return float(value)
    return 1.0
