"""One dropout-tolerant sum of pairwise masks: the rounds of Bonawitz et al. on SecAgg+'s graph.

Bonawitz, Ivanov, Kreuter, Marcedone, McMahan, Patel, Ramage, Segal and Seth, "Practical
Secure Aggregation for Privacy-Preserving Machine Learning", CCS 2017 (semi-honest version),
with the sparse neighbourhoods of Bell, Bonawitz, Gascón, Lepoint and Raykova, CCS 2020
(SecAgg+, as Flower's ``secaggplus_mod`` runs it). Each sender ``u`` of one sum, with
holders ``H_u``: itself and the ``k`` neighbours it masks with (every other sender on the
complete graph), and a Shamir threshold ``t``:

0. ``advertise_keys``: makes two X25519 key pairs, ``(s_u, S_u)`` for its pairwise masks and
   ``(c_u, C_u)`` to seal shares, and sends ``S_u, C_u`` to the aggregator, which forwards
   to ``u`` those of its neighbours. Neighbours agree ``k_uv = HKDF(X25519(s_u, S_v))``.
1. ``share_keys``: draws a self-mask seed ``b_u``, splits ``s_u`` and ``b_u`` t-of-|H_u|
   (:mod:`.shamir`, one point per sender), and sends each holder its two shares sealed to it
   (:mod:`.sealing`) through the aggregator.
2. The protocol's contribution: ``y_u = x_u + PRG(b_u) + sum_{v > u} PRG(k_uv) -
   sum_{v < u} PRG(k_uv)`` in Z_2^64, the PRG AES-128-CTR (16-byte keys: the security level
   of the X25519 agreements, about 128 bits; the backend's other masks use AES-256). The senders
   that drop (drawn from the run's secret stream, or named) go silent after step 1: their
   contributions never reach the aggregator, and they answer nothing.
3. ``unmask``: the aggregator names to each survivor the senders, among those whose shares
   it holds, that dropped and that did not; the survivor refuses a request naming one sender
   both ways (the aggregator would get both its secrets) and returns its shares of each
   dropped sender's ``s`` and each survivor's ``b``. With ``t`` shares of each the aggregator
   rebuilds every survivor's ``b`` and every dropped sender's ``s`` (so ``k_dv`` for each
   surviving neighbour ``v``), and removes every mask left in the sum.

The aggregator opens the sum of the survivors' inputs (Bonawitz's ``U_3``): a dropped
sender's input is lost. It holds, in the end, the survivors' self-mask seeds and the dropped
senders' mask keys (recorded as key holds), never a survivor's mask key: a coalition of the
aggregator and at least ``t`` holders of a sender's shares rebuilds that key and reads its
input (:mod:`fedsec.attacks.mask_shares`); below ``t`` it lacks some pairwise mask.

Both ends of a pair derive the same keys; the simulator derives each pair's X25519 secrets
once and keeps one copy, as the backend does for its keys. Every key, seed and Shamir
coefficient comes from the run's secret seed (``key_source=simulation``) or the operating
system (``key_source=agreement``); which senders drop comes from the run's secret stream.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from fedsec.backends import dropouts, prg, sealing, shamir, tags
from fedsec.backends.api import KeyContext
from fedsec.backends.mask_terms import SumPlan
from fedsec.errors import CapabilityError

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation
    from fedsec.keys import KeyStore

MASK, SEAL, SELF = "mask", "seal", "self"
MASK_KEY_BYTES = 16
"""Bytes of a mask key (AES-128): a longer one adds nothing to the X25519 agreement's
security level (about 128 bits), and AES-128 runs 10 rounds to AES-256's 14."""


def round_label(nonce: str, senders: Iterable[str]) -> str:
    """The label of the sum of ``senders`` under ``nonce``: it ends every key id of the sum.

    Examples
    --------
    >>> len(round_label("noise:sum:agg/x/1", ["a", "b"]))
    16
    """
    text = nonce + "\x00" + ",".join(sorted(senders))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class DropoutRound:
    """The state of one dropout-tolerant sum (each party's part, kept by the simulator)."""

    label: str
    nonce: str
    receiver: str
    senders: tuple[str, ...]
    neighbours: Mapping[str, Sequence[str]]
    threshold: int
    dropped: frozenset[str]
    key_source: str
    keystores: Mapping[str, KeyStore]
    """Each party's own key store (what it holds)."""
    ciphers: dict[str, Any]
    """Expanded AES keys by key id, shared with the backend's context."""
    points: dict[str, int] = field(default_factory=dict)
    holders: dict[str, tuple[str, ...]] = field(default_factory=dict)
    public: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)
    """(mask, seal) public keys as the aggregator received them."""
    delivered: dict[str, dict[str, tuple[bytes, bytes]]] = field(default_factory=dict)
    """What each sender received of its neighbours' public keys."""
    held: dict[str, dict[str, tuple[int, int, int]]] = field(default_factory=dict)
    """holder -> dealer -> (point, share of the dealer's mask key, share of its seed)."""
    pair_keys: dict[str, bytes] = field(default_factory=dict)
    plans: dict[str, SumPlan] = field(default_factory=dict)
    terms: dict[str, dict[str, int]] = field(default_factory=dict)
    """Each sender's mask terms ``{key id@nonce: sign}``, as its contribution carries them."""
    unmasked: bool = False
    _private: dict[tuple[str, str], X25519PrivateKey] = field(default_factory=dict)
    _seal_secrets: dict[tuple[str, str], bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.points = {u: i + 1 for i, u in enumerate(sorted(self.senders))}
        self.holders = {u: tuple(sorted({u, *self.neighbours[u]})) for u in self.senders}

    @property
    def survivors(self) -> list[str]:
        """The senders that did not drop, in the senders' order."""
        return [u for u in self.senders if u not in self.dropped]


def open_round(federation: Federation, context: KeyContext, nonce: str, *, threshold: int,
               dropout: float, dropped: str, key_source: str) -> DropoutRound:
    """Steps 0 and 1 of one sum (keys advertised, shares dealt and delivered sealed), once
    the senders that drop are chosen and known to leave enough holders."""
    label = round_label(nonce, context.senders)
    gone = dropouts.choose(federation, context.senders, label, dropout=dropout,
                           dropped=dropped)
    r = DropoutRound(label, nonce, context.receiver, context.senders, context.state["neighbours"],
                     threshold, gone, key_source, context.state["keystores"],
                     context.state["ciphers"])
    dropouts.check_recoverable(r.holders, gone, threshold)
    net = federation.network
    with net.stage("advertise_keys"):
        _advertise(federation, r)
    with net.stage("share_keys"):
        dealt = {u: _deal(federation, r, u) for u in r.senders}
        for holder in r.senders:
            _forward(federation, r, holder, dealt)
    return r


def mask_plan(r: DropoutRound, sender: str) -> SumPlan:
    """``sender``'s masks in the sum, resolved once: its pairwise masks, then its self mask."""
    plan = r.plans.get(sender)
    if plan is None:
        self_id = tags.self_key_id(sender, r.label)
        terms = [(tags.pair_key_id(sender, v, r.label), 1 if sender < v else -1)
                 for v in r.neighbours[sender]] + [(self_id, 1)]
        resolved = []
        for (key_id, sign), v in zip(terms, [*r.neighbours[sender], sender], strict=True):
            cipher = r.ciphers.get(key_id)
            if cipher is None:
                if key_id == self_id:
                    material = r.keystores[sender].get(self_id)
                elif key_id in r.pair_keys:  # both ends agree the same key: derived once
                    material = r.pair_keys[key_id]
                else:
                    material = r.pair_keys[key_id] = prg.agreed_key(
                        _private(r, sender, MASK), r.delivered[sender][v][0], key_id,
                        length=MASK_KEY_BYTES)
                cipher = r.ciphers[key_id] = prg.block_cipher(material)
            resolved.append((cipher, sign))
        plan = r.plans[sender] = SumPlan(
            tuple(terms), tuple(c for c, sign in resolved if sign > 0),
            tuple(c for c, sign in resolved if sign < 0),
            ",".join(sorted(key_id for key_id, _ in terms)))
        r.terms[sender] = {f"{key_id}@{r.nonce}": sign for key_id, sign in terms}
    return plan


def unmask(federation: Federation, r: DropoutRound) -> None:
    """Step 3: the survivors' shares to the aggregator, which rebuilds and holds every key the
    survivors' sum is still masked under."""
    net = federation.network
    self_points: dict[str, list[tuple[int, int]]] = {u: [] for u in r.survivors}
    mask_points: dict[str, list[tuple[int, int]]] = {d: [] for d in r.dropped}
    with net.stage("unmask"):
        for holder in r.survivors:
            owners = list(r.held[holder])
            selves = [u for u in owners if u not in r.dropped]
            masks = [u for u in owners if u in r.dropped]
            request = {tags.ROUND: r.label, tags.SELF_MASKS: selves, tags.MASK_KEYS: masks}
            net.send(r.receiver, holder, tags.UNMASK_REQUEST, b"", meta=request)
            with net.compute(holder):
                payload = _answer(r, holder, selves, masks)
            arrived = net.send(holder, r.receiver, tags.UNMASK_SHARES, payload,
                               meta={**request, tags.POINT: r.points[holder]})
            shares = [int.from_bytes(arrived[i:i + shamir.SHARE_BYTES], "big")
                      for i in range(0, len(arrived), shamir.SHARE_BYTES)]
            for owner, share in zip([*selves, *masks], shares, strict=True):
                (self_points if owner in self_points else mask_points)[owner].append(
                    (r.points[holder], share))
        with net.compute(r.receiver):
            seeds = {u: _rebuild(pts, r.threshold, f"{u}'s self-mask seed", MASK_KEY_BYTES)
                     for u, pts in self_points.items()}
            keys = {d: _rebuild(pts, r.threshold, f"{d}'s mask key", shamir.SECRET_BYTES)
                    for d, pts in mask_points.items()}
            pairs = {}
            for d in sorted(keys):
                private = sealing.private_key(keys[d])
                for v in r.neighbours[d]:
                    if v not in r.dropped:
                        key_id = tags.pair_key_id(d, v, r.label)
                        pairs[key_id] = prg.agreed_key(private, r.public[v][0], key_id,
                                                       length=MASK_KEY_BYTES)
        meta = {"key_source": r.key_source, tags.ROUND: r.label}
        for u, seed in seeds.items():
            federation.hold_key(r.receiver, tags.self_key_id(u, r.label), seed,
                                meta={**meta, "scheme": "AES-128-CTR"})
        for d, key in sorted(keys.items()):
            federation.hold_key(r.receiver, tags.mask_key_id(d, r.label), key,
                                meta={**meta, "scheme": "X25519"})
        for key_id, key in pairs.items():
            federation.hold_key(r.receiver, key_id, key, meta={**meta, "scheme": "AES-128-CTR"})
    r.unmasked = True


def party_secret(federation: Federation, key_source: str, label: str, party: str,
                 purpose: str) -> bytes:
    """32 bytes of ``party``'s secret for ``purpose`` in the sum ``label``: from the run's
    secret seed (simulation, reproducible) or the operating system (agreement)."""
    if key_source == prg.SIMULATION:
        return prg.simulation_key(federation.secret_seed,
                                  f"noise:secagg:{label}:{purpose}:{party}")
    return secrets.token_bytes(prg.KEY_BYTES)


# -- steps ------------------------------------------------------------------------------------
def _advertise(federation: Federation, r: DropoutRound) -> None:
    net = federation.network
    for u in r.senders:
        with net.compute(u):
            materials = {kind: party_secret(federation, r.key_source, r.label, u, kind)
                         for kind in (MASK, SEAL)}
            for kind, material in materials.items():
                r._private[(u, kind)] = sealing.private_key(material)
            payload = b"".join(sealing.public_bytes(r._private[(u, kind)])
                               for kind in (MASK, SEAL))
        meta = {"key_source": r.key_source, "scheme": "X25519", tags.ROUND: r.label}
        federation.hold_key(u, tags.mask_key_id(u, r.label), materials[MASK], meta=meta)
        federation.hold_key(u, tags.seal_key_id(u, r.label), materials[SEAL], meta=meta)
        got = bytes(net.send(u, r.receiver, tags.KEYS, payload, meta=meta))
        r.public[u] = (got[:sealing.PUBLIC_BYTES], got[sealing.PUBLIC_BYTES:])
    width = 2 * sealing.PUBLIC_BYTES
    for u in r.senders:
        others = [v for v in r.holders[u] if v != u]
        payload = b"".join(r.public[v][0] + r.public[v][1] for v in others)
        got = bytes(net.send(r.receiver, u, tags.KEYS_FORWARD, payload,
                             meta={tags.ROUND: r.label, tags.PARTIES: others}))
        r.delivered[u] = {v: (got[i * width:i * width + sealing.PUBLIC_BYTES],
                              got[i * width + sealing.PUBLIC_BYTES:(i + 1) * width])
                          for i, v in enumerate(others)}


def _deal(federation: Federation, r: DropoutRound, u: str) -> tuple[list[str], bytes]:
    """``u`` splits its mask key and a fresh self-mask seed among its holders, keeps its own
    shares and sends the others sealed to the aggregator; returns whom they are for and what
    the aggregator received."""
    net = federation.network
    with net.compute(u):
        seed = party_secret(federation, r.key_source, r.label, u, SELF)[:MASK_KEY_BYTES]
    federation.hold_key(u, tags.self_key_id(u, r.label), seed,
                        meta={"key_source": r.key_source, "scheme": "AES-128-CTR",
                              tags.ROUND: r.label})
    t, holders = r.threshold, r.holders[u]
    with net.compute(u):
        coefficients = shamir.random_coefficients(2 * (t - 1), _coefficient_bytes(federation,
                                                                                  r, u))
        xs = [r.points[v] for v in holders]
        mask_key = r.keystores[u].get(tags.mask_key_id(u, r.label))
        mask_shares = shamir.split(shamir.secret_from_bytes(mask_key), t, xs, coefficients[:t - 1])
        seed_shares = shamir.split(shamir.secret_from_bytes(seed), t, xs, coefficients[t - 1:])
        to, sealed = [], []
        for v, x, a, b in zip(holders, xs, mask_shares, seed_shares, strict=True):
            if v == u:
                r.held.setdefault(u, {})[u] = (x, a, b)
                continue
            key = sealing.direction_key(_seal_secret(r, u, v), r.label, u, v)
            sealed.append(sealing.seal(key, sealing.share_record(x, a, b),
                                       sealing.associated_data(r.label, u, v)))
            to.append(v)
    meta = {tags.ROUND: r.label, tags.FROM: [u] * len(to), tags.TO: to,
            tags.SENDER_KEYS: [r.public[u][1].hex()] * len(to), tags.SEALED: sealing.SCHEME,
            tags.THRESHOLD: t}
    got = net.send(u, r.receiver, tags.SHARES, b"".join(sealed), protection="noise",
                   key_id=",".join(tags.seal_key_id(v, r.label) for v in to), meta=meta)
    return to, bytes(got)


def _forward(federation: Federation, r: DropoutRound, holder: str,
             dealt: Mapping[str, tuple[list[str], bytes]]) -> None:
    """The aggregator forwards to ``holder`` the records sealed to it; ``holder`` opens them."""
    net = federation.network
    dealers, records = [], []
    for u, (to, payload) in dealt.items():
        if holder in to:
            i = to.index(holder)
            dealers.append(u)
            records.append(payload[i * sealing.SEALED_BYTES:(i + 1) * sealing.SEALED_BYTES])
    meta = {tags.ROUND: r.label, tags.FROM: dealers, tags.TO: [holder] * len(dealers),
            tags.SENDER_KEYS: [r.public[u][1].hex() for u in dealers],
            tags.SEALED: sealing.SCHEME, tags.THRESHOLD: r.threshold}
    got = bytes(net.send(r.receiver, holder, tags.SHARES_FORWARD, b"".join(records),
                         protection="noise", key_id=tags.seal_key_id(holder, r.label),
                         meta=meta))
    with net.compute(holder):
        held = r.held.setdefault(holder, {})
        for u, sealed in zip(dealers, sealing.split_sealed(got, len(dealers)), strict=True):
            key = sealing.direction_key(_seal_secret(r, u, holder), r.label, u, holder)
            point, a, b = sealing.parse_record(
                sealing.unseal(key, sealed, sealing.associated_data(r.label, u, holder)))
            if point != r.points[holder]:
                raise CapabilityError(f"{holder} received {u}'s shares for another point.")
            held[u] = (point, a, b)


def _answer(r: DropoutRound, holder: str, selves: Sequence[str], masks: Sequence[str]) -> bytes:
    """``holder``'s shares for an unmask request, after the checks the protocol makes."""
    if set(selves) & set(masks):
        raise CapabilityError(
            f"{holder} refuses the unmask request: it names {sorted(set(selves) & set(masks))} "
            "both as dropped and as surviving, which would hand the aggregator both secrets.")
    held = r.held[holder]
    unknown = sorted((set(selves) | set(masks)) - set(held))
    if unknown:
        raise CapabilityError(f"{holder} holds no shares of {unknown}.")
    return (b"".join(shamir.to_bytes(held[u][2]) for u in selves)
            + b"".join(shamir.to_bytes(held[d][1]) for d in masks))


def _rebuild(points: Sequence[tuple[int, int]], threshold: int, what: str, size: int) -> bytes:
    if len(points) < threshold:
        raise CapabilityError(f"Only {len(points)} shares of {what} arrived; the threshold is "
                              f"{threshold}.")
    chosen = sorted(points)[:threshold]
    return shamir.secret_to_bytes(shamir.reconstruct([x for x, _ in chosen],
                                                     [y for _, y in chosen]), size)


def _private(r: DropoutRound, party: str, kind: str) -> X25519PrivateKey:
    """``party``'s X25519 private key of ``kind``, from its key store (parsed once)."""
    key = r._private.get((party, kind))
    if key is None:
        key_id = (tags.mask_key_id if kind == MASK else tags.seal_key_id)(party, r.label)
        key = r._private[(party, kind)] = sealing.private_key(r.keystores[party].get(key_id))
    return key


def _seal_secret(r: DropoutRound, dealer: str, holder: str) -> bytes:
    """The X25519 secret ``dealer`` and ``holder`` agree for sealing (derived once per pair)."""
    pair = (min(dealer, holder), max(dealer, holder))
    shared = r._seal_secrets.get(pair)
    if shared is None:
        shared = r._seal_secrets[pair] = sealing.shared_secret(
            _private(r, dealer, SEAL), r.delivered[dealer][holder][1])
    return shared


def _coefficient_bytes(federation: Federation, r: DropoutRound,
                       party: str) -> Callable[[int], bytes]:
    if r.key_source == prg.SIMULATION:
        key = party_secret(federation, r.key_source, r.label, party, "coefficients")
        return lambda n: hashlib.shake_256(key).digest(n)
    return secrets.token_bytes
