"""The server and colluding clients read one client's update through Flower's SecAgg+.

SecAgg+ (Bell et al., CCS 2020; Bonawitz et al., CCS 2017) hides each client's model from
the server behind a self mask and one pairwise mask per neighbour, and shares every
client's two secrets among its neighbours with threshold ``t``. Its guarantee holds against
a server colluding with fewer than ``t`` clients. This attack measures that boundary on a
real Flower run: the coalition (the server and the clients named in the threat, e.g.
``server,client1,client2``) pools

- what the server observed: every public key, every encrypted share routed through it,
  every masked vector, and the seed shares of the unmask stage (with which SecAgg+ itself
  lets the server remove each client's self mask);
- what each colluding client holds (its own ``sk1``, ``sk2`` and ``rd_seed``, recorded by
  :func:`fedsec.protocols.flower.secagg.record_secagg_secrets`).

For a target outside the coalition it decrypts the shares the target dealt to each member
(Fernet under ``ECDH(sk2_member, pk2_target)``); with at least ``t`` shares of the target's
``sk1`` it rebuilds that key and so every pairwise mask the target applied (a mask shared
with a member follows from the member's own ``sk1`` too). It then removes the masks, and
dequantizes: the target's update is read to within one quantization step over its weight
(:func:`.secagg_maths.quantization_bound`). Below the threshold the coalition lacks a
pairwise mask and stays at the naive baseline, the round's mean update, which the
aggregate reveals to the server anyway; ``info`` says, per target, what was missing.

Targets are ``party/<client>/value/update/round<r>``, the plaintext updates
:func:`fedsec.protocols.flower.client.record_plaintext` recorded inside ``secaggplus_mod``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedsec.attacks.flower import secagg_maths as sm
from fedsec.attacks.flower.secagg_traffic import (
    CLIPPING_RANGE,
    MOD_RANGE,
    TARGET_RANGE,
    SecAggRound,
    later_models,
    secagg_rounds,
)
from fedsec.attacks.flower.update_readout import mean_update
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import held_value, value_key
from fedsec.protocols.flower import tags
from fedsec.registry import register
from fedsec.view import View


def _secret(view: View, party: str, server_round: int, name: str) -> bytes | None:
    """A coalition member's own SecAgg+ secret of the round, if its holdings have it."""
    held = view.knowledge.get(party, {})
    value = held.get(held_value(tags.secagg_key(server_round, name)))
    if value is None:
        return None
    return value if isinstance(value, bytes) else np.asarray(value, dtype=np.uint8).tobytes()


class _Coalition:
    """The secrets of one round the coalition holds or can rebuild."""

    def __init__(self, view: View, r: SecAggRound) -> None:
        self.r = r
        self.members = {n for n, p in r.parties.items() if p in view.knowledge}
        self.sk1 = {n: s for n in self.members
                    if (s := _secret(view, r.parties[n], r.round, "sk1")) is not None}
        self.sk2 = {n: s for n in self.members
                    if (s := _secret(view, r.parties[n], r.round, "sk2")) is not None}
        self._rebuilt: dict[int, bytes | None] = {}

    def shares_of(self, node: int) -> tuple[list[bytes], list[bytes]]:
        """The shares of ``node``'s (rd_seed, sk1) that the coalition decrypts from the
        ciphertexts ``node`` dealt to its members."""
        seeds, keys = [], []
        for member, sk2 in sorted(self.sk2.items()):
            ciphertext = self.r.ciphertexts.get((node, member))
            pk2 = self.r.public_keys.get(node, (b"", b""))[1]
            if ciphertext is None or not pk2:
                continue
            source, destination, seed_share, key_share = sm.split_share_plaintext(
                sm.decrypt(sm.shared_key(sk2, pk2), ciphertext))
            if (source, destination) == (node, member):
                seeds.append(seed_share)
                keys.append(key_share)
        return seeds, keys

    def sk1_of(self, node: int) -> bytes | None:
        """``node``'s pairwise-mask key: a member's own, or rebuilt from ``t`` shares."""
        if node in self.sk1:
            return self.sk1[node]
        if node not in self._rebuilt:
            _, keys = self.shares_of(node)
            self._rebuilt[node] = (sm.combine_shares(keys)
                                   if keys and len(keys) >= self.r.threshold else None)
        return self._rebuilt[node]


def rebuild(view: View, r: SecAggRound, target: int) -> tuple[np.ndarray | None, dict[str, Any]]:
    """The target's model (flattened) if the coalition can unmask it, and what it used or
    lacked."""
    coalition = _Coalition(view, r)
    seeds, keys = coalition.shares_of(target)
    facts: dict[str, Any] = {"threshold": r.threshold, "sk1_shares_held": len(keys),
                             "neighbours": len(r.applied.get(target, []))}
    server_seed_shares = r.seed_shares.get(target, [])
    seed_shares = server_seed_shares if len(server_seed_shares) >= len(seeds) else seeds
    if len(seed_shares) < r.threshold:
        facts["lacks"] = (f"the seed of its self mask: {len(seed_shares)} shares observed, "
                          f"{r.threshold} needed")
        return None, facts
    rd_seed = sm.combine_shares(seed_shares)
    own_key = coalition.sk1_of(target)
    pairwise, missing = [], []
    pk1_target = r.public_keys[target][0]
    for neighbour in r.applied.get(target, []):
        if own_key is not None:
            key = sm.shared_key(own_key, r.public_keys[neighbour][0])
        elif (theirs := coalition.sk1_of(neighbour)) is not None:
            key = sm.shared_key(theirs, pk1_target)
        else:
            missing.append(r.parties.get(neighbour, str(neighbour)))
            continue
        pairwise.append((key, sm.pairwise_sign(target, neighbour)))
    facts["sk1_rebuilt"] = own_key is not None
    if missing:
        facts["lacks"] = (f"the pairwise masks shared with {', '.join(sorted(missing))}: the "
                          f"coalition holds {len(keys)} of the {r.threshold} shares of the "
                          "target's sk1 and neither party's sk1")
        return None, facts
    quantized = sm.unmask(r.masked[target], rd_seed, pairwise, int(r.settings[MOD_RANGE]))
    model, weight = sm.dequantize_model(quantized, float(r.settings[CLIPPING_RANGE]),
                                        int(r.settings[TARGET_RANGE]))
    facts["weight"] = weight
    facts["error_bound"] = sm.quantization_bound(float(r.settings[CLIPPING_RANGE]),
                                                 int(r.settings[TARGET_RANGE]), weight)
    return np.concatenate([m.ravel() for m in model]), facts


def unmasked_sum(r: SecAggRound) -> np.ndarray:
    """The round's aggregate as Flower's workflow computes it from the masked vectors and the
    unmask stage's seed shares (the weighted mean model, flattened): what SecAgg+ lets the
    server alone learn."""
    modulus = int(r.settings[MOD_RANGE])
    clip, levels = float(r.settings[CLIPPING_RANGE]), int(r.settings[TARGET_RANGE])
    total: list[np.ndarray] | None = None
    for node in r.order:
        vector = [np.asarray(a, dtype=np.int64) for a in r.masked[node]]
        total = vector if total is None else [a + b for a, b in zip(total, vector, strict=True)]
    if total is None:
        return np.zeros(0)
    total = [np.mod(a, modulus) for a in total]
    shapes = [a.shape for a in total]
    for node in r.order:
        seed = sm.combine_shares(r.seed_shares[node])
        total = [a - m for a, m in zip(total, sm.prg(seed, modulus, shapes), strict=True)]
    total = [np.mod(a, modulus) for a in total]
    factor = int(total[0].ravel()[0])
    offset = -(len(r.order) - 1) * clip
    parts = [(a.astype(float) * (2 * clip / levels) - clip + offset) * (levels / factor)
             for a in total[1:]]
    return np.concatenate([p.ravel() for p in parts])


@register("attack", "flower-secagg-coalition")
class FlowerSecAggCoalition(Attack):
    """The server with colluding clients rebuilds a Flower client's SecAgg+ masks from their keys
    and the shares routed through it, and reads its update (at or above the threshold).

    The server with colluding clients unmasks a client's SecAgg+ upload.
    """

    paper = ("Bell et al., Secure Single-Server Aggregation with (Poly)Logarithmic Overhead, "
             "CCS 2020")
    needs_tags = frozenset({tags.TRAIN_INSTRUCTION, tags.TRAIN_REPLY})
    closed_form = True
    produces = "values"

    def unmet(self, view: View) -> str | None:
        rounds = secagg_rounds(view)
        if not rounds:
            return (f"{view.threat} observed no SecAgg+ stage: the run did not use Flower's "
                    "SecAgg+ (its train replies are readable as they are)")
        if not any(p not in view.knowledge for r in rounds.values()
                   for n, p in r.parties.items() if n in r.masked):
            return (f"{view.threat} observed no masked vector of a client outside it: only "
                    "the server receives them, so the coalition must include the server")
        return None

    def run(self, view: View) -> Reconstruction:
        after = later_models(view)
        estimates, baseline = {}, {}
        per_target: dict[str, dict[str, Any]] = {}
        rounds = secagg_rounds(view)
        for server_round, r in sorted(rounds.items()):
            targets = [n for n in r.order if r.parties[n] not in view.knowledge]
            before = next((r.global_model[n] for n in r.order if n in r.global_model), None)
            if before is None:
                continue  # the coalition did not see the model sent: no update to read
            later = after.get(server_round)
            if later is None and all(n in r.seed_shares for n in r.order):
                later = unmasked_sum(r)
            guess = mean_update(before, later, [])
            for node in targets:
                party = r.parties[node]
                key = value_key(party, tags.update_key(server_round))
                model, facts = rebuild(view, r, node)
                baseline[key] = guess
                estimates[key] = guess if model is None else model - r.global_model.get(
                    node, before)
                facts["recovered"] = model is not None
                per_target[f"{party}/round{server_round}"] = facts
        recovered = sum(f["recovered"] for f in per_target.values())
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates=estimates, baseline=baseline,
            info={"targets": per_target, "recovered": recovered,
                  "coalition_clients": sorted({r.parties[n] for r in rounds.values()
                                               for n in r.parties
                                               if r.parties[n] in view.knowledge})})
