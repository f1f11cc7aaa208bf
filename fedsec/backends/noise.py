"""Additive masking with AES-CTR masks in Z_2^64 fixed point.

Two uses, as the papers make them:

* ``sum`` mode, pairwise masks that cancel in a sum (Bonawitz et al., "Practical
  Secure Aggregation for Privacy-Preserving Machine Learning", CCS 2017,
  without dropout recovery): every pair of senders shares a key; sender ``i``
  adds ``+PRG(k_ij)`` for each ``j > i`` and ``-PRG(k_ij)`` for each ``j < i``.
  One masked vector is uniformly random to the aggregator; the sum of all of
  them is the sum of the values. With ``n_neighbours=k`` only the pairs of
  SecAgg+'s sparse Harary graph share masks (Bell et al., CCS 2020; the graph
  and its privacy threshold are in :mod:`fedsec.backends.mask_graph`).
* ``direct`` mode, a mask shared between a sender and one designated remover
  (FedCG's masked labels, removed by the server that can regenerate them).

With ``threshold=t`` (at least 2) a sum tolerates dropouts (Bonawitz et al. 2017, on
SecAgg+'s graph): each sum's senders agree fresh X25519 mask keys, add a self mask, and
Shamir-share both secrets t-of-n among their neighbours through the aggregator, which
rebuilds what the senders that dropped (``dropout``, a fraction drawn from the run's secret
stream, or ``dropped`` by name) left in the survivors' sum
(:mod:`fedsec.backends.dropout_round`). The sum is then the survivors' sum.

Values are fixed-point words modulo 2**64, so masks cancel exactly; the range
is checked against declared public bounds at encoding, never silently wrapped.
Each key is expanded once per run and every mask of one nonce enciphers the
same counter blocks, so a sender's online work is one AES call and one add
per mask. Keys come from the run's secret seed (``key_source=simulation``: reproducible, and
marked insecure in the transcript header) or from an X25519 agreement through
the network (``key_source=agreement``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from fedsec.backends import dropout_round, dropouts, mask_graph, prg, sealing, tags
from fedsec.backends.api import (
    SUM,
    Capabilities,
    KeyContext,
    MaskingBackend,
    Protected,
)
from fedsec.backends.fixed_point import check_range, decode_z64, encode_z64, z64_bound
from fedsec.backends.mask_terms import (
    apply_masks,
    direct_key_id,
    key_ids_of,
    merge_terms,
    pair_key_id,
    sum_plan,
)
from fedsec.declare import Choice, Declared, Float, Int, owner_of
from fedsec.errors import CapabilityError, ValidationError
from fedsec.registry import register
from fedsec.seeding import generator
from fedsec.validation import param_error
from fedsec.wire import Wire

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation

#: The receiver announces the seed of a sparse mask graph's order under this tag.
GRAPH_TAG = tags.GRAPH


@register("backend", "noise")
class NoiseBackend(MaskingBackend):
    """Additive AES-CTR masks in Z_2^64: pairwise-cancelling, or removed by a designated party.

    Additive masks from AES-256-CTR, pairwise (secure sum) or shared with a remover.
    """

    paper = "Bonawitz et al., Practical Secure Aggregation for Privacy-Preserving ML, CCS 2017"
    protection = "noise"
    operations = frozenset({"add", "add_plain", "mul_plain_scalar", "sum"})
    exact = True

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        fraction_bits: Annotated[int, Int(min=1, max=60)] = 36
        """Fixed-point fraction bits: values are encoded as round(x * 2**fraction_bits) modulo
        2**64."""
        max_abs: Annotated[float, Float(min=0.0, min_inclusive=False)] = 65536.0
        """Public bound on the magnitude of masked values; at most 2**(63 - fraction_bits) /
        max_summands, so sums fit in 64 bits."""
        max_summands: Annotated[int, Int(min=1)] = 1024
        """Terms a masked sum may add at most (sets the headroom max_abs must leave)."""
        key_source: Annotated[str, Choice(*prg.KEY_SOURCES)] = prg.SIMULATION
        """Mask keys from the run's secret seed (simulation: reproducible, marked insecure in the
        transcript header) or from an X25519 agreement through the network (agreement)."""
        n_neighbours: Annotated[int, Int(min=0)] = 0
        """Senders each sender masks with in a sum: 0 for all (the complete graph), or an even k
        for SecAgg+'s Harary graph (private unless a coalition holds all k neighbours of one)."""
        threshold: Annotated[int, Int(min=0)] = 0
        """Dropout tolerance of sums: 0 for none (no key shares); t >= 2 for Bonawitz et al.'s
        protocol, each sender's mask key and self-mask seed shared t-of-n among itself and its
        neighbours (t above half of them), so the survivors' sum opens while t holders of
        every sender's shares remain."""
        dropout: Annotated[float, Float(min=0.0, max=1.0, max_inclusive=False)] = 0.0
        """Fraction of a sum's senders that drop once their key shares are dealt (their
        contributions never arrive), drawn from the run's secret stream; needs threshold."""
        dropped: str = ""
        """Senders that drop from every sum, comma-separated, instead of a drawn fraction;
        needs threshold."""

        def __post_init__(self) -> None:
            if self.threshold == 1:
                raise param_error(owner_of(self), "threshold",
                                  "0 (no dropout tolerance) or an int >= 2 (with 1, each share "
                                  "alone is the secret)", self.threshold)
            if self.threshold == 0 and (self.dropout > 0 or self.dropped):
                raise param_error(owner_of(self), "threshold",
                                  ">= 2 when senders drop (dropout or dropped): the key shares "
                                  "it sets up are what unmasks the survivors' sum", 0)
            if self.dropout > 0 and self.dropped:
                raise param_error(owner_of(self), "dropped",
                                  "empty when 'dropout' draws the senders that drop (set one)",
                                  self.dropped)
            if self.n_neighbours % 2:
                raise param_error(owner_of(self), "n_neighbours",
                                  "an even int >= 0 (0: every pair of senders masks)",
                                  self.n_neighbours)
            bound = z64_bound(self.fraction_bits, self.max_summands)
            if self.max_abs > bound:
                raise param_error(
                    owner_of(self), "max_abs",
                    f"<= {bound:.6g} with fraction_bits={self.fraction_bits} and "
                    f"max_summands={self.max_summands} (so that sums fit in 64 bits)",
                    self.max_abs)

    @property
    def caps(self) -> Capabilities:
        return Capabilities(operations=self.operations, exact=True,
                            deterministic=self.params.key_source == prg.SIMULATION)

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["insecure_simulation_keys"] = self.params.key_source == prg.SIMULATION
        return out

    # -- keys ------------------------------------------------------------------
    def make_context(self, federation: Federation, *, senders: tuple[str, ...], receiver: str,
                     mode: str) -> KeyContext:
        if mode == SUM:
            if len(senders) < 2:
                raise ValidationError(
                    "Pairwise masks need at least two senders; with one sender the sum is the "
                    "vector itself."
                )
            with federation.network.stage("key_setup"):
                neighbours = self._mask_graph(federation, senders, receiver)
            complete = all(len(near) == len(senders) - 1 for near in neighbours.values())
            linked = combinations(sorted(senders), 2) if complete else mask_graph.edges(neighbours)
            # a dropout-tolerant sum agrees fresh keys each time (a dropped sender's are rebuilt)
            pairs = [] if self.tolerates_dropouts else [(a, b, pair_key_id(a, b))
                                                        for a, b in linked]
            if self.tolerates_dropouts:
                dropouts.check_threshold(self.params.threshold, neighbours,
                                         f"backend {self.name!r}")
        else:
            neighbours = {}
            pairs = [(s, receiver, direct_key_id(s, receiver)) for s in senders]
        with federation.network.stage("key_setup"):
            for a, b, key_id in pairs:
                self._establish(federation, a, b, key_id)
        own: dict[str, list[str]] = {}
        for a, b, key_id in pairs:
            own.setdefault(a, []).append(key_id)
            own.setdefault(b, []).append(key_id)
        return KeyContext(
            backend=self.name, senders=senders, receiver=receiver, mode=mode,
            key_id=f"noise:{mode}:{receiver}",
            holders={key_id: (a, b) for a, b, key_id in pairs},
            # one expansion per key: both ends derive the same key, the simulator keeps one copy
            state={"keystores": {p: federation.party(p).keys for p in {*senders, receiver}},
                   "neighbours": neighbours, "own_keys": own, "ciphers": {}, "rounds": {}},
        )

    @property
    def tolerates_dropouts(self) -> bool:
        """Whether sums share keys so that they survive dropouts (``threshold`` >= 2)."""
        return self.params.threshold >= 2

    def start_sum(self, federation: Federation, context: KeyContext,
                  nonce: str) -> tuple[str, ...]:
        """In a dropout-tolerant sum, advertise keys and deal key shares, then drop senders;
        the senders whose contributions will arrive."""
        if context.mode != SUM or not self.tolerates_dropouts:
            return context.senders
        p = self.params
        r = dropout_round.open_round(federation, context, nonce, threshold=p.threshold,
                                     dropout=p.dropout, dropped=p.dropped,
                                     key_source=p.key_source)
        context.state["rounds"][nonce] = context.state["current"] = r
        return tuple(r.survivors)

    def _mask_graph(self, federation: Federation, senders: tuple[str, ...],
                    receiver: str) -> dict[str, tuple[str, ...]]:
        """Who masks with whom: every pair, or a Harary graph whose order the receiver draws
        and announces (its seed, in the clear) so every sender computes the same graph."""
        degree = self.params.n_neighbours
        if degree == 0 or degree >= len(senders) - 1:
            return mask_graph.complete_neighbours(senders)
        purpose = f"noise:graph:{receiver}:" + ",".join(sorted(senders))
        seed = generator(federation.secret_seed, purpose).bytes(32)
        arrived = federation.network.broadcast(receiver, senders, GRAPH_TAG, seed,
                                               meta={"graph": "harary", "n_neighbours": degree})
        for sender, got in arrived.items():
            if bytes(got) != seed:
                raise CapabilityError(
                    f"The mask graph's seed {receiver} announced reached {sender} altered (a man "
                    "in the middle); the senders would mask on different graphs.")
        return mask_graph.harary_neighbours(mask_graph.graph_order(senders, seed), degree)

    def prepare(self, context: KeyContext, party: str, n_values: int) -> None:
        """Expand ``party``'s AES keys once (offline), so the online round only enciphers."""
        current = context.state.get("current")
        if current is not None:  # a dropout-tolerant sum: this sum's keys
            if party in current.senders:
                dropout_round.mask_plan(current, party)
            return
        ciphers, keys = context.state["ciphers"], context.state["keystores"][party]
        for key_id in context.state["own_keys"].get(party, ()):
            if key_id not in ciphers:
                ciphers[key_id] = prg.block_cipher(keys.get(key_id))
        if context.mode == SUM and party in context.state["neighbours"]:
            sum_plan(context, party)

    def _establish(self, federation: Federation, a: str, b: str, key_id: str) -> None:
        meta = {"key_source": self.params.key_source, "scheme": "AES-256-CTR"}
        if self.params.key_source == prg.SIMULATION:
            material = prg.simulation_key(federation.secret_seed, key_id)
            federation.share_key(a, key_id, material, to=[b], meta=meta)
            return
        net = federation.network
        private_a, public_a = prg.agreement_keypair()
        private_b, public_b = prg.agreement_keypair()
        # each end agrees with the public key the network delivered to it, so a key swapped in
        # transit shows up as a failed agreement, as it would between real parties
        at_b = net.send(a, b, "key.agreement", public_a, key_id=key_id,
                        meta={**meta, "x25519": True})
        at_a = net.send(b, a, "key.agreement", public_b, key_id=key_id,
                        meta={**meta, "x25519": True})
        try:
            material = prg.agreed_key(private_a, bytes(at_a), key_id)
            other = prg.agreed_key(private_b, bytes(at_b), key_id)
        except ValueError as error:  # not a public key at all
            raise CapabilityError(f"X25519 key agreement {key_id} between {a} and {b} failed: "
                                  f"a delivered public key is malformed ({error}).") from None
        if other != material:
            raise CapabilityError(
                f"X25519 key agreement {key_id} between {a} and {b} failed: the ends derived "
                "different keys, so a public key was altered in transit (a man in the middle).")
        federation.hold_key(a, key_id, material, meta=meta)
        federation.hold_key(b, key_id, material, meta=meta)

    # -- protect and reveal ------------------------------------------------------
    def protect(self, context: KeyContext, sender: str, values: np.ndarray, *,
                nonce: str) -> Protected:
        arr = check_range(values, self.params.max_abs, what=f"noise masking at {sender!r}")
        words = encode_z64(arr, self.params.fraction_bits)
        if context.mode == SUM:
            r = context.state["rounds"].get(nonce)  # a dropout-tolerant sum's own keys
            plan = sum_plan(context, sender) if r is None else dropout_round.mask_plan(r, sender)
            prg.MaskStream(nonce, words.size).add_all(words, plan.adds, plan.subtracts)
            if r is not None:
                return Protected(self.name, plan.key_ids, arr.size, words,
                                 {"summands": 1, "masks": dict(r.terms[sender]),
                                  tags.ROUND: r.label})
            terms = {f"{key_id}@{nonce}": sign for key_id, sign in plan.terms}
            return Protected(self.name, plan.key_ids, arr.size, words,
                             {"summands": 1, "masks": terms})
        terms = {f"{direct_key_id(sender, context.receiver)}@{nonce}": 1}
        masked = apply_masks(words, terms, context.state["keystores"][sender], in_place=True,
                             ciphers=context.state["ciphers"])
        return Protected(self.name, key_ids_of(terms), arr.size, masked,
                         {"summands": 1, "masks": terms})

    def reveal(self, federation: Federation, context: KeyContext,
               protected: Protected) -> np.ndarray:
        self._check_summands(protected)
        terms = protected.info["masks"]
        keys = context.state["keystores"][context.receiver]
        needed = {t.partition("@")[0] for t in terms}
        missing = sorted(k for k in needed if k not in keys)
        if missing and context.state["rounds"]:  # a dropout-tolerant sum: ask for the shares
            for nonce in {t.partition("@")[2] for t in terms}:
                r = context.state["rounds"].get(nonce)
                if r is not None and not r.unmasked:
                    dropout_round.unmask(federation, r)
            missing = sorted(k for k in needed if k not in keys)
        if missing:
            raise CapabilityError(
                f"{context.receiver!r} cannot reveal this value: it is still masked under "
                f"{', '.join(missing)}, which it does not hold (only complete sums unmask)."
            )
        words = apply_masks(protected.data, terms, keys, sign=-1,
                            ciphers=context.state["ciphers"])
        return decode_z64(words, self.params.fraction_bits)

    def _check_summands(self, protected: Protected) -> None:
        if protected.info["summands"] > self.params.max_summands:
            raise CapabilityError(
                f"A masked value sums {protected.info['summands']} terms, more than max_summands="
                f"{self.params.max_summands}; its fixed-point range may have wrapped."
            )

    # -- wire --------------------------------------------------------------------
    def to_wire(self, protected: Protected) -> Wire:
        meta = {"fraction_bits": self.params.fraction_bits, "summands": protected.info["summands"],
                "masks": dict(protected.info["masks"]), "elements": protected.length,
                "key_source": self.params.key_source}
        if tags.ROUND in protected.info:
            meta[tags.ROUND] = protected.info[tags.ROUND]
        return Wire(protected.data, self.protection, protected.key_id, meta)

    def from_wire(self, context: KeyContext, party: str, wire: Wire) -> Protected:
        data = np.asarray(wire.payload, dtype=np.uint64)
        if wire.meta.get("fraction_bits") != self.params.fraction_bits:
            raise ValidationError("A masked payload uses another fixed-point scale than this run.")
        return Protected(self.name, wire.key_id, data.size, data,
                         {"summands": wire.meta["summands"], "masks": dict(wire.meta["masks"])})

    @classmethod
    def open_payload(cls, payload: Any, meta: Mapping[str, Any],
                     keys: Mapping[str, bytes]) -> np.ndarray | bytes:
        if tags.SEALED in meta:  # key shares: the records sealed to the holders of ``keys``
            return b"".join(record for _, _, record in sealing.open_records(payload, meta, keys))
        terms = meta["masks"]
        needed = {t.partition("@")[0] for t in terms}
        missing = sorted(needed - set(keys))
        if missing:
            raise CapabilityError(f"Opening this payload needs keys {', '.join(missing)}.")
        words = apply_masks(np.asarray(payload, dtype=np.uint64), terms, keys, sign=-1)
        return decode_z64(words, meta["fraction_bits"])

    # -- operations ----------------------------------------------------------------
    def add(self, a: Protected, b: Protected) -> Protected:
        _same_length(a, b)
        terms = merge_terms(a.info["masks"], b.info["masks"])
        return Protected(self.name, key_ids_of(terms), a.length, a.data + b.data,
                         {"summands": a.info["summands"] + b.info["summands"], "masks": terms})

    def add_plain(self, a: Protected, values: np.ndarray) -> Protected:
        arr = check_range(values, self.params.max_abs, what="noise add_plain")
        words = encode_z64(arr, self.params.fraction_bits)
        return Protected(self.name, a.key_id, a.length, a.data + words,
                         {**a.info, "summands": a.info["summands"] + 1})

    def mul_plain(self, a: Protected, factor: float | np.ndarray) -> Protected:
        if np.ndim(factor) != 0:
            raise self._lacks("mul_plain_elementwise")
        if float(factor) != int(factor):
            raise CapabilityError(
                "Masked fixed-point words can be multiplied by integers only (a fractional factor "
                f"would need a rescaling masks do not survive). Got {factor!r}."
            )
        k = int(factor)
        terms = merge_terms(a.info["masks"], scale=k)
        return Protected(self.name, key_ids_of(terms), a.length,
                         a.data * np.uint64(k % (1 << 64)),
                         {"summands": a.info["summands"] * abs(k), "masks": terms})

    def sum(self, items: Sequence[Protected]) -> Protected:
        if not items:
            raise ValidationError("Cannot sum zero masked vectors.")
        for other in items[1:]:
            _same_length(items[0], other)
        total = np.array(items[0].data, dtype=np.uint64, copy=True)
        for other in items[1:]:  # in place: no stacked copy of every contribution
            np.add(total, other.data, out=total)
        terms = merge_terms(*(p.info["masks"] for p in items))
        return Protected(self.name, key_ids_of(terms), items[0].length, total,
                         {"summands": sum(p.info["summands"] for p in items), "masks": terms})


def _same_length(a: Protected, b: Protected) -> None:
    if a.length != b.length:
        raise ValidationError(
            f"Cannot combine masked vectors of lengths {a.length} and {b.length}."
        )
