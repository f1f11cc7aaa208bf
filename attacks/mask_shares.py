"""The aggregator and colluding senders rebuild a sender's masks from the key shares they hold.

A dropout-tolerant sum of the ``noise`` backend (``threshold`` t; Bonawitz et al., CCS 2017,
on SecAgg+'s graph, Bell et al., CCS 2020) Shamir-shares each sender's mask key and
self-mask seed t-of-n among the sender and its neighbours, sealed to each holder and routed
through the aggregator (:mod:`fedsec.backends.dropout_round`). Its guarantee holds against an
aggregator colluding with fewer than t holders. This attack measures that boundary: the
coalition (the aggregator and the senders the threat names) pools

- what the aggregator observed: every sender's public keys, the sealed shares it routed, the
  masked contributions, and the survivors' shares of the unmask step, with which the
  protocol itself has it rebuild each survivor's self-mask seed and each dropped sender's
  mask key (held keys of its View);
- what each colluding sender holds: its own mask key, and the shares sealed to it (opened
  with its own seal key).

For each sender outside the coalition whose contribution it observed, it rebuilds the
sender's mask key from t shares, when it has them, and so every pairwise mask the sender
added; else each pairwise mask from a member's own mask key (the member is the other end) or
from a dropped neighbour's key the aggregator rebuilt. With every mask it reads the
contribution exactly; lacking one it stays at the baseline (the revealed sum split evenly
over the contributions), and ``info`` says what was missing.

Targets: ``party/<sender>/value/vector``, the vectors secure sums add.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedsec.attacks.contribution_readout import equal_share, revealed_sum
from fedsec.backends import prg, sealing, shamir, tags
from fedsec.backends.dropout_round import MASK_KEY_BYTES
from fedsec.backends.noise import NoiseBackend
from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import truth_key
from fedsec.registry import register
from fedsec.transcript import Message
from fedsec.view import View

SHARE_TAGS = (tags.SHARES, tags.SHARES_FORWARD, tags.UNMASK_SHARES)


@dataclass
class SumShares:
    """What a coalition observed and holds of one dropout-tolerant sum."""

    label: str
    threshold: int = 0
    mask_public: dict[str, bytes] = field(default_factory=dict)
    mask_shares: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    """owner -> point -> share of its mask key."""
    seed_shares: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    """owner -> point -> share of its self-mask seed."""

    def rebuilt(self, shares: Mapping[int, int], size: int) -> bytes | None:
        """The ``size``-byte secret behind ``shares`` when they reach the threshold, else
        None."""
        if self.threshold < 1 or len(shares) < self.threshold:
            return None
        points = sorted(shares)[:self.threshold]
        try:
            return shamir.secret_to_bytes(
                shamir.reconstruct(points, [shares[x] for x in points]), size)
        except ValueError:
            return None


def observed_sums(view: View) -> dict[str, SumShares]:
    """Per sum label: public keys, the threshold, and every share the coalition can read
    (sealed records its members' seal keys open, and the unmask step's shares)."""
    sums: dict[str, SumShares] = {}

    def of(message: Message) -> SumShares:
        label = str(message.meta[tags.ROUND])
        return sums.setdefault(label, SumShares(label))

    width = 2 * sealing.PUBLIC_BYTES
    for m in view.select(tag=tags.KEYS):
        of(m).mask_public[m.sender] = bytes(m.payload)[:sealing.PUBLIC_BYTES]
    for m in view.select(tag=tags.KEYS_FORWARD):
        raw = bytes(m.payload)
        for i, party in enumerate(m.meta[tags.PARTIES]):
            of(m).mask_public.setdefault(party, raw[i * width:i * width + sealing.PUBLIC_BYTES])
    keys = view.keys
    for tag in (tags.SHARES, tags.SHARES_FORWARD):
        for m in view.select(tag=tag):
            s = of(m)
            s.threshold = int(m.meta[tags.THRESHOLD])
            for dealer, _, record in sealing.open_records(bytes(m.payload), m.meta, keys):
                point, mask_share, seed_share = sealing.parse_record(record)
                s.mask_shares[dealer][point] = mask_share
                s.seed_shares[dealer][point] = seed_share
    for m in view.select(tag=tags.UNMASK_SHARES):
        s, raw, point = of(m), bytes(m.payload), int(m.meta[tags.POINT])
        owners = [*m.meta[tags.SELF_MASKS], *m.meta[tags.MASK_KEYS]]
        n_self = len(m.meta[tags.SELF_MASKS])
        for i, owner in enumerate(owners):
            share = int.from_bytes(raw[i * shamir.SHARE_BYTES:(i + 1) * shamir.SHARE_BYTES], "big")
            (s.seed_shares if i < n_self else s.mask_shares)[owner][point] = share
    return sums


def unmask_keys(view: View, s: SumShares, target: str,
                terms: Mapping[str, int]) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The keys of the masks ``terms`` names that the coalition holds or rebuilds for the
    contribution of ``target``, and what it used or lacked."""
    held, label = view.keys, s.label
    own_key = s.rebuilt(s.mask_shares.get(target, {}), shamir.SECRET_BYTES)
    facts: dict[str, Any] = {"round": label, "threshold": s.threshold,
                             "mask_key_shares": len(s.mask_shares.get(target, {})),
                             "self_seed_shares": len(s.seed_shares.get(target, {})),
                             "mask_key_rebuilt": own_key is not None}
    by_pair = {tags.pair_key_id(target, v, label): v for v in view.parties if v != target}
    out: dict[str, bytes] = {}
    missing, partners = [], []
    for key_id in {t.partition("@")[0] for t in terms}:
        if key_id in held:
            out[key_id] = held[key_id]
        elif key_id == tags.self_key_id(target, label):
            seed = s.rebuilt(s.seed_shares.get(target, {}), MASK_KEY_BYTES)
            if seed is None:
                missing.append("its self-mask seed")
            else:
                out[key_id] = seed
        elif key_id in by_pair:
            key = _pair_key(held, s, target, by_pair[key_id], own_key, key_id)
            if key is None:
                partners.append(by_pair[key_id])
            else:
                out[key_id] = key
        else:
            missing.append(f"the mask under {key_id}")
    if partners:
        missing.append(f"the pairwise masks shared with {', '.join(sorted(partners))}")
    if missing:
        facts["lacks"] = (f"{'; '.join(missing)} (the coalition holds "
                          f"{facts['mask_key_shares']} of the {s.threshold} shares of the "
                          "target's mask key)")
    return out, facts


def _pair_key(held: Mapping[str, bytes], s: SumShares, target: str, other: str,
              own_key: bytes | None, key_id: str) -> bytes | None:
    """The key ``target`` and ``other`` agreed: from the target's rebuilt mask key, or from
    ``other``'s own (held by a member) or rebuilt one."""
    if own_key is not None and other in s.mask_public:
        return prg.agreed_key(sealing.private_key(own_key), s.mask_public[other], key_id,
                              length=MASK_KEY_BYTES)
    theirs = held.get(tags.mask_key_id(other, s.label))
    if theirs is None:
        theirs = s.rebuilt(s.mask_shares.get(other, {}), shamir.SECRET_BYTES)
    if theirs is not None and target in s.mask_public:
        return prg.agreed_key(sealing.private_key(theirs), s.mask_public[target], key_id,
                              length=MASK_KEY_BYTES)
    return None


@register("attack", "mask-share-coalition")
class MaskShareCoalition(Attack):
    """The aggregator with colluding senders rebuilds a sender's masks from the key shares of a
    dropout-tolerant noise sum and reads its contribution (at or above the Shamir threshold).

    The aggregator with colluding senders unmasks a contribution to a dropout-tolerant sum.
    """

    paper = ("Bonawitz et al., Practical Secure Aggregation for Privacy-Preserving ML, CCS "
             "2017")
    needs_tags = frozenset({CONTRIBUTION_TAG})
    closed_form = True

    def unmet(self, view: View) -> str | None:
        if not any(view.select(tag=tag) for tag in SHARE_TAGS):
            return (f"{view.threat} observed no key share of a dropout-tolerant sum: the run "
                    "did not use the noise backend with a threshold")
        return None

    def run(self, view: View) -> Reconstruction:
        contributions = [m for m in view.select(tag=CONTRIBUTION_TAG) if tags.ROUND in m.meta]
        sums = observed_sums(view)
        total = revealed_sum(view)
        guess = (equal_share(total, len(contributions)) if total is not None and contributions
                 else None)
        estimates, baseline, per_target = {}, {}, {}
        for m in contributions:
            target = m.sender
            if target in view.knowledge:
                continue  # a member's own contribution
            s = sums.get(str(m.meta[tags.ROUND]))
            if s is None:
                continue
            keys, facts = unmask_keys(view, s, target, m.meta["masks"])
            fallback = guess if guess is not None else np.zeros(int(m.meta["elements"]))
            value = None
            if "lacks" not in facts:
                value = np.asarray(NoiseBackend.open_payload(m.payload, m.meta, keys), dtype=float)
            key = truth_key(target, "value", "vector")
            baseline[key] = fallback
            estimates[key] = fallback if value is None else value
            facts["recovered"] = value is not None
            per_target[target] = facts
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates=estimates, baseline=baseline,
            info={"targets": per_target,
                  "recovered": sum(f["recovered"] for f in per_target.values()),
                  "sum_observed": total is not None})
