"""Dropout-tolerant secure sums: the noise backend's key-share mode against Flower's SecAgg+.

Run: ``python tests/benchmarks/bench_secagg_dropout.py [--parties 10,64,256,1024]
[--length 4096] [--fraction 0.333] [--dropout 0.1] [--repeat 3] [--budget 120]``
(Flower installed: ``pip install flwr``).

For each number of senders K both sides use the same mask graph: each sender masks with its k
neighbours on a ring, k = :func:`fedsec.backends.mask_graph.min_degree` (K, ``--fraction``)
(every other sender when that is K - 1); its key shares have k + 1 holders (itself and its
neighbours: Flower's ``num_shares``) and the threshold is a majority of them, (k + 1) // 2 + 1.
Vectors hold ``--length`` floats. Two comparisons, like for like:

* **masking alone**, no dropouts, keys and self-mask seeds given (no key agreement, no
  shares): fedsec's senders protect their vectors (fixed-point encoding, k pairwise masks and
  one self mask from AES-128-CTR, ``NoiseBackend.protect`` in the key-share mode), the
  aggregator sums them and removes the self masks (``sum``, ``reveal``); Flower's clients
  quantize and mask (``quantize``,
  its MT19937 ``pseudo_rand_gen`` per mask, modular adds), its server sums, removes the private
  masks and dequantizes. Neither side messages or serializes.
* **whole round with dropout recovery**, ``--dropout`` of the senders dropping once their
  shares are dealt: fedsec runs ``secure_sum`` with ``threshold`` and ``dropout``
  (``key_source=agreement``: X25519 keys from the operating system), every message recorded in
  the transcript: the graph's seed, key advertisement, Shamir shares sealed to their holders
  (AES-GCM) through the aggregator, the survivors' contributions, the unmask round, the
  reconstruction of the survivors' self-mask seeds and the dropped senders' mask keys, the
  unmasking. Flower runs its SecAgg+ stages 0 to 3 as ``secaggplus_mod`` and
  ``SecAggPlusWorkflow`` do, with its own functions: SECP384R1 key pairs, ``create_shares`` of
  each client's seed and key, ECDH and Fernet per neighbour, decryption, masking with ECDH per
  neighbour, ``combine_shares`` for every client, and each dropped client's pairwise masks
  rebuilt from its key; without messaging or serialization (a lower bound on its round).

Each comparison is timed in alternated pairs (fedsec, then Flower, ``--repeat`` times; a K
whose pairs have taken more than ``--budget`` seconds stops repeating), and prints the min /
median / max of each side's seconds and of the pairs' ratio Flower / fedsec. Where masking
alone takes milliseconds (K = 10) each timing is the mean of a few runs on both sides, so
that the clock's and the scheduler's jitter stay small beside it. Both results are
checked against the plaintext sum of the senders that took part.
"""

from __future__ import annotations

import argparse
import base64
import os
import time
from collections.abc import Callable
from statistics import median

import numpy as np

from fedsec.backends import tags
from fedsec.backends.dropout_round import round_label
from fedsec.backends.mask_graph import min_degree
from fedsec.backends.primitives import CONTRIBUTION_TAG, secure_sum
from fedsec.registry import create
from fedsec.testing import small_federation

CLIP, LEVELS, MODULUS = 8.0, 1 << 22, 1 << 32  # Flower's SecAgg+ defaults


def vectors(n: int, length: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {f"p{i:02d}": rng.uniform(-4, 4, size=length) for i in range(n)}


def fedsec_masking(data: dict[str, np.ndarray], params: dict, inner: int = 1) -> float:
    """Seconds for fedsec's senders to mask and its aggregator to sum and unmask (the mean of
    ``inner`` runs), the round's keys set up and expanded beforehand and the self-mask seeds
    handed to the aggregator."""
    senders = list(data)
    federation = small_federation(len(senders))
    backend = create("backend", "noise", params)
    context = backend.setup(federation, senders=senders, receiver="agg")
    nonce = context.next_nonce("bench")
    backend.start_sum(federation, context, nonce)
    for party in senders:
        backend.prepare(context, party, next(iter(data.values())).size)
    label = round_label(nonce, senders)
    for party in senders:  # the seeds given, as Flower's masking is given them
        key_id = tags.self_key_id(party, label)
        federation.hold_key("agg", key_id, federation.party(party).keys.get(key_id))
    start = time.perf_counter()
    for _ in range(inner):
        protected = [backend.protect(context, s, data[s], nonce=nonce) for s in senders]
        total = backend.reveal(federation, context, backend.sum(protected))
    seconds = (time.perf_counter() - start) / inner
    assert np.max(np.abs(total - np.sum(list(data.values()), axis=0))) <= 1e-6
    return seconds


def fedsec_round(data: dict[str, np.ndarray], params: dict) -> float:
    """Seconds of one whole dropout-tolerant ``secure_sum`` (everything through the network)."""
    federation = small_federation(len(data))
    backend = create("backend", "noise", params)
    start = time.perf_counter()
    total = secure_sum(federation, backend, data, "agg")
    seconds = time.perf_counter() - start
    arrived = {m.sender for m in federation.network.close().select(tag=CONTRIBUTION_TAG)}
    assert len(arrived) < len(data) or params.get("dropout", 0) == 0
    assert np.max(np.abs(total - np.sum([data[s] for s in arrived], axis=0))) <= 1e-6
    return seconds


class FlowerSecAggPlus:
    """Flower's SecAgg+ for K clients on a ring of ``degree`` neighbours, with its functions."""

    def __init__(self, data: dict[str, np.ndarray], degree: int, threshold: int,
                 n_dropped: int) -> None:
        n = self.n = len(data)
        half = degree // 2
        self.near = ({i: set(range(n)) for i in range(n)} if degree >= n - 1 else
                     {i: {(i + d) % n for d in range(-half, half + 1)} for i in range(n)})
        self.threshold = threshold
        # Flower's quantization range, halved until K clients' quantized sum fits its modulus
        self.levels = min(LEVELS, MODULUS // (2 * n))
        self.arrays = [[v] for v in data.values()]
        self.values = list(data.values())
        rng = np.random.default_rng(1)
        self.dropped = {int(i) for i in rng.choice(n, size=n_dropped, replace=False)}
        # masking alone: pairwise keys (Flower's format) and private-mask seeds given
        self.shared = {(i, j): base64.urlsafe_b64encode(os.urandom(32))
                       for i in range(n) for j in self.near[i] if i < j}
        self.seeds = [os.urandom(32) for _ in range(n)]

    def _mask(self, i: int, seed: bytes, key: Callable[[int], bytes]) -> list[np.ndarray]:
        from flwr.common.secure_aggregation.ndarrays_arithmetic import (
            factor_combine,
            parameters_addition,
            parameters_mod,
            parameters_subtraction,
        )
        from flwr.common.secure_aggregation.quantization import quantize
        from flwr.common.secure_aggregation.secaggplus_utils import pseudo_rand_gen

        q = factor_combine(self.levels, quantize(self.arrays[i], CLIP, self.levels))
        dims = [a.shape for a in q]
        q = parameters_addition(q, pseudo_rand_gen(seed, MODULUS, dims))
        for j in sorted(self.near[i] - {i}):
            mask = pseudo_rand_gen(key(j), MODULUS, dims)
            q = parameters_addition(q, mask) if i > j else parameters_subtraction(q, mask)
        return parameters_mod(q, MODULUS)

    @staticmethod
    def _total(masked: list[list[np.ndarray]]) -> list[np.ndarray]:
        from flwr.common.secure_aggregation.ndarrays_arithmetic import (
            parameters_addition,
            parameters_mod,
        )

        total = masked[0]
        for other in masked[1:]:
            total = parameters_addition(total, other)
        return parameters_mod(total, MODULUS)

    def _decode(self, total: list[np.ndarray], n_alive: int) -> np.ndarray:
        from flwr.common.secure_aggregation.ndarrays_arithmetic import (
            factor_extract,
            parameters_mod,
        )
        from flwr.common.secure_aggregation.quantization import dequantize

        ratio, rest = factor_extract(parameters_mod(total, MODULUS))
        (mean,) = dequantize(rest, CLIP, self.levels)
        return (mean - (n_alive - 1) * CLIP) * (self.levels / ratio) * n_alive

    def masking(self, inner: int = 1) -> tuple[float, np.ndarray]:
        """Seconds (the mean of ``inner`` runs) and the sum of masking alone, keys and seeds
        given."""
        from flwr.common.secure_aggregation.ndarrays_arithmetic import parameters_subtraction
        from flwr.common.secure_aggregation.secaggplus_utils import pseudo_rand_gen

        start = time.perf_counter()
        for _ in range(inner):
            masked = [self._mask(i, self.seeds[i],
                                 lambda j, i=i: self.shared[min(i, j), max(i, j)])
                      for i in range(self.n)]
            total = self._total(masked)
            dims = [a.shape for a in total]
            for i in range(self.n):
                total = parameters_subtraction(total,
                                               pseudo_rand_gen(self.seeds[i], MODULUS, dims))
            out = self._decode(total, self.n)
        return (time.perf_counter() - start) / inner, out

    def round(self) -> tuple[float, np.ndarray]:
        """Seconds (and the survivors' sum) of stages 0 to 3 with the dropouts."""
        from flwr.common.secure_aggregation.crypto.shamir import combine_shares, create_shares
        from flwr.common.secure_aggregation.crypto.symmetric_encryption import (
            decrypt,
            encrypt,
            generate_shared_key,
        )
        from flwr.common.secure_aggregation.ndarrays_arithmetic import (
            parameters_addition,
            parameters_subtraction,
        )
        from flwr.common.secure_aggregation.secaggplus_utils import (
            pseudo_rand_gen,
            share_keys_plaintext_concat,
            share_keys_plaintext_separate,
        )
        from flwr.supercore.primitives.asymmetric import (
            bytes_to_private_key,
            bytes_to_public_key,
            generate_key_pairs,
            private_key_to_bytes,
            public_key_to_bytes,
        )

        n, t = self.n, self.threshold
        start = time.perf_counter()
        keys = []  # stage 0: two key pairs per client, serialized to be sent
        for _ in range(n):
            (sk1, pk1), (sk2, pk2) = generate_key_pairs(), generate_key_pairs()
            keys.append((private_key_to_bytes(sk1), public_key_to_bytes(pk1),
                         private_key_to_bytes(sk2), public_key_to_bytes(pk2)))
        inbox: dict[int, list[tuple[int, bytes]]] = {i: [] for i in range(n)}
        own, ss2 = {}, {}
        for i in range(n):  # stage 1: shares of the seed and of sk1, encrypted per neighbour
            rd_seed, owners = os.urandom(32), sorted(self.near[i])
            b_shares = create_shares(rd_seed, t, len(owners))
            sk1_shares = create_shares(keys[i][0], t, len(owners))
            for idx, j in enumerate(owners):
                if j == i:
                    own[i] = (rd_seed, b_shares[idx], sk1_shares[idx])
                    continue
                ss2[i, j] = generate_shared_key(bytes_to_private_key(keys[i][2]),
                                                bytes_to_public_key(keys[j][3]))
                plaintext = share_keys_plaintext_concat(i, j, b_shares[idx], sk1_shares[idx])
                inbox[j].append((i, encrypt(ss2[i, j], plaintext)))
        alive = [i for i in range(n) if i not in self.dropped]
        held: dict[int, dict[int, tuple[bytes, bytes]]] = {}
        masked = []
        for i in alive:  # stage 2: open the shares, mask with every neighbour that shared
            held[i] = {i: own[i][1:]}
            for src, ciphertext in inbox[i]:
                _, _, b_share, sk1_share = share_keys_plaintext_separate(
                    decrypt(ss2[i, src], ciphertext))
                held[i][src] = (b_share, sk1_share)
            masked.append(self._mask(i, own[i][0], lambda j, i=i: generate_shared_key(
                bytes_to_private_key(keys[i][0]), bytes_to_public_key(keys[j][1]))))
        total = self._total(masked)
        dims = [a.shape for a in total]
        collected: dict[int, list[bytes]] = {i: [] for i in range(n)}
        for i in alive:  # stage 3: seed shares of the living, sk1 shares of the dead
            for j in self.near[i]:
                collected[j].append(held[i][j][1] if j in self.dropped else held[i][j][0])
        for node in range(n):
            assert len(collected[node]) >= t, "a dropout set Flower cannot recover"
            secret = combine_shares(collected[node])
            if node not in self.dropped:
                total = parameters_subtraction(total, pseudo_rand_gen(secret, MODULUS, dims))
                continue
            for other in sorted(self.near[node] - {node}):
                key = generate_shared_key(bytes_to_private_key(secret),
                                          bytes_to_public_key(keys[other][1]))
                mask = pseudo_rand_gen(key, MODULUS, dims)
                total = (parameters_addition(total, mask) if node > other
                         else parameters_subtraction(total, mask))
        out = self._decode(total, len(alive))
        return time.perf_counter() - start, out

    def expected(self, with_dropouts: bool) -> np.ndarray:
        return np.sum([v for i, v in enumerate(self.values)
                       if not (with_dropouts and i in self.dropped)], axis=0)


def fmt(values: list[float]) -> str:
    """Median (min-max) of seconds, in ms below one second."""
    scale, unit = (1e3, "ms") if median(values) < 1 else (1.0, "s")
    low, mid, high = (v * scale for v in (min(values), median(values), max(values)))
    return f"{mid:.3g} {unit} ({low:.3g}-{high:.3g})"


def fmt_ratio(values: list[float]) -> str:
    return f"{median(values):.1f}x ({min(values):.1f}-{max(values):.1f})"


def pairs(ours: Callable[[], float], theirs: Callable[[], float], repeat: int,
          budget: float) -> tuple[list[float], list[float]]:
    """Alternated (fedsec, Flower) timings until ``repeat`` pairs or ``budget`` seconds."""
    mine, flower = [], []
    started = time.perf_counter()
    for _ in range(repeat):
        mine.append(ours())
        flower.append(theirs())
        if time.perf_counter() - started > budget:
            break
    return mine, flower


def bench(n: int, args: argparse.Namespace) -> None:
    data = vectors(n, args.length)
    degree = min(min_degree(n, args.fraction), n - 1)
    threshold = (degree + 1) // 2 + 1
    params = {"threshold": threshold, **({"n_neighbours": degree} if degree < n - 1 else {})}
    n_dropped = int(np.floor(args.dropout * n + 0.5))
    flower = FlowerSecAggPlus(data, degree, threshold, n_dropped)
    print(f"K={n}: k={degree} neighbours, threshold {threshold} of {degree + 1} holders, "
          f"{n_dropped} dropped in the round; Flower's quantization range 2**"
          f"{flower.levels.bit_length() - 1}")
    tolerance = 4 * n * 2 * CLIP / flower.levels

    inner = max(1, 1000 // (n * (degree + 1)))  # runs per timing: a few milliseconds at least

    def flower_masking() -> float:
        seconds, out = flower.masking(inner)
        assert np.max(np.abs(out - flower.expected(False))) <= tolerance
        return seconds

    def flower_round() -> float:
        seconds, out = flower.round()
        assert np.max(np.abs(out - flower.expected(True))) <= tolerance
        return seconds

    round_params = {**params, "dropout": args.dropout, "key_source": "agreement"}
    for label, ours, theirs in (
            ("masking alone", lambda: fedsec_masking(data, params, inner), flower_masking),
            ("whole round  ", lambda: fedsec_round(data, round_params), flower_round)):
        mine, flowers = pairs(ours, theirs, args.repeat, args.budget)
        ratios = [f / m for m, f in zip(mine, flowers, strict=True)]
        print(f"  {label} fedsec {fmt(mine)} | Flower {fmt(flowers)} | Flower / fedsec "
              f"{fmt_ratio(ratios)} ({len(mine)} pairs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parties", default="10,64,256,1024")
    parser.add_argument("--length", type=int, default=4096)
    parser.add_argument("--fraction", type=float, default=1 / 3)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=120.0)
    args = parser.parse_args()
    print(f"vectors of {args.length} floats; graph degree for {args.fraction:.3f} corrupted "
          f"senders at split probability <= 2**-40; {args.dropout:.0%} dropouts in the round")
    small = vectors(8, args.length)  # warm up (imports, caches): not reported
    fedsec_masking(small, {"threshold": 5})
    fedsec_round(small, {"threshold": 5, "dropout": args.dropout})
    FlowerSecAggPlus(small, 7, 5, 1).round()
    for n in (int(p) for p in args.parties.split(",")):
        bench(n, args)


if __name__ == "__main__":
    main()
