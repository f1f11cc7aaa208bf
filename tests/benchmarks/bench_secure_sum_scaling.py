"""Pairwise-mask secure sums at many parties, against the AES floor and Flower's SecAgg+ masks.

Run: ``python tests/benchmarks/bench_secure_sum_scaling.py [--parties 64,256,1024]
[--length 4096] [--fraction 0.333] [--repeat 3] [--budget 60] [--no-flower-shares]``.

For each number of senders K and each mask graph (``complete``: every pair; ``harary``: the
noise backend's ``n_neighbours`` = the smallest even k whose split bound against ``--fraction``
corrupted senders is at most 2**-40, :func:`fedsec.backends.mask_graph.min_degree`), prints:

* ``secure_sum`` of K vectors of ``--length`` floats with keys already set up: total, and
  online (total less the offline key expansion in ``prepare``);
* the AES floor: the same keystream bytes (one mask per sender and neighbour) from AES-256 over
  counter blocks under one expanded key, one call per mask, nothing else: what generating the
  masks costs at least;
* the ratio online / floor (the per-mask overhead left);
* key setup (``key_source=simulation``: one key share per edge through the network; with
  ``--agreement``, ``key_source=agreement``: an X25519 exchange per edge);
* with Flower installed (``pip install flwr``), Flower's SecAgg+ for the same K, length and
  degree with its own functions (:class:`FlowerRound`), twice: its masking alone (clients
  quantize and mask, the server sums and removes the private masks, given the seeds), and its
  whole online round (stages 2 and 3: each client first decrypts the Shamir shares its
  neighbours sent it, and the server rebuilds every private-mask seed from its shares, as
  SecAgg+ does even when no client drops out; a majority of the shares is the threshold);
  each with the ratio Flower / fedsec online. fedsec's noise backend simulates no dropouts,
  so it shares no seeds: the masking ratio compares the same work, the round ratio the two
  protocols as they run. Both leave out Flower's serialization and messaging, so they
  understate its time. With ``--agreement``, both sides also pay their key agreement (fedsec:
  X25519 per edge through the network; Flower: ECDH per neighbour in each client's stage 2,
  as its mod does).

Medians over ``--repeat`` runs, with the range. A configuration whose time, projected from the
last size measured (in proportion to the number of masks), exceeds ``--budget`` seconds for one
run is skipped and reported; one that took more than three budgets over its repeats stops
repeating. ``--graphs complete`` runs on a checkout that predates the sparse graph.
"""

from __future__ import annotations

import argparse
import base64
import functools
import os
import time
from functools import partial
from statistics import median

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from fedsec.backends.primitives import secure_sum
from fedsec.registry import create
from fedsec.testing import small_federation


def vectors(n: int, length: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {f"p{i:02d}": rng.uniform(-4, 4, size=length) for i in range(n)}


def fedsec_sum(data: dict[str, np.ndarray], params: dict) -> tuple[float, float, float]:
    """(key setup, secure_sum total, online) seconds for one run."""
    federation = small_federation(len(data))
    backend = create("backend", "noise", params)
    start = time.perf_counter()
    backend.setup(federation, senders=list(data), receiver="agg")
    setup = time.perf_counter() - start
    start = time.perf_counter()
    total = secure_sum(federation, backend, data, "agg")
    seconds = time.perf_counter() - start
    expected = np.sum(list(data.values()), axis=0)
    assert np.max(np.abs(total - expected)) <= 1e-6
    offline = sum(s for (_, _, phase), s in federation.network.compute_seconds().items()
                  if phase == "offline")
    return setup, seconds, seconds - offline


def aes_floor(n_masks: int, length: int) -> float:
    """Seconds to encipher ``n_masks`` keystreams of ``length`` words under one expanded key."""
    blocks = bytes(8 * (length + length % 2))
    buffer = bytearray(len(blocks) + 16)
    encryptor = Cipher(algorithms.AES(os.urandom(32)), modes.ECB()).encryptor()  # noqa: S305
    start = time.perf_counter()
    for _ in range(n_masks):
        encryptor.update_into(blocks, buffer)
    return time.perf_counter() - start


class FlowerRound:
    """Flower's SecAgg+ for the same K, length and degree, with its own functions.

    Set up once (not timed): keys, each client's private-mask seed, and with ``shares`` its
    stage-1 work: Shamir shares of the seed and of its first secret key among itself and its
    neighbours (``create_shares``, threshold a majority of the shares), each encrypted to its
    neighbour (``encrypt``). :meth:`online` times stages 2 and 3 as Flower runs them without
    dropouts: every client decrypts the shares its neighbours sent it (with ``shares``), then
    quantizes and masks (``quantize``, ``pseudo_rand_gen``, ``parameters_addition`` and
    ``subtraction``); the server sums the masked vectors, rebuilds each client's seed from the
    shares (``combine_shares``, with ``shares``; else it is given the seeds) and removes the
    private masks. Messaging and serialization are left out: a lower bound on Flower's round.
    """

    def __init__(self, data: dict[str, np.ndarray], degree: int, agreement: bool,
                 shares: bool) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec
        from flwr.common.secure_aggregation.crypto.shamir import create_shares
        from flwr.common.secure_aggregation.crypto.symmetric_encryption import encrypt
        from flwr.common.secure_aggregation.secaggplus_utils import share_keys_plaintext_concat

        n = len(data)
        half = degree // 2
        self.near = {i: [(i + d) % n for d in range(-half, half + 1) if d] for i in range(n)}
        if degree >= n - 1:
            self.near = {i: [j for j in range(n) if j != i] for i in range(n)}
        self.agreement, self.shares = agreement, shares
        self.secret = [ec.generate_private_key(ec.SECP384R1()) for _ in range(n)] if agreement \
            else []
        self.public = [s.public_key() for s in self.secret]
        # the shared keys of stage 1 (with --agreement, stage 2 derives them again, as its mod
        # does); without it they are taken as given: random, in Flower's key format
        self.shared = {(min(i, j), max(i, j)): base64.urlsafe_b64encode(os.urandom(32))
                       for i in self.near for j in self.near[i]}
        self.seeds = [os.urandom(32) for _ in range(n)]
        self.arrays = [[v] for v in data.values()]
        self.inbox: dict[int, list[tuple[int, bytes]]] = {i: [] for i in range(n)}
        self.own_share: dict[int, bytes] = {}
        if shares:
            self.threshold = (degree + 1) // 2 + 1
            for i in range(n):
                owners = [i, *self.near[i]]  # one share each
                b_shares = create_shares(self.seeds[i], self.threshold, len(owners))
                sk_shares = create_shares(os.urandom(32), self.threshold, len(owners))
                self.own_share[i] = b_shares[0]
                for idx, j in enumerate(owners[1:], start=1):
                    plaintext = share_keys_plaintext_concat(i, j, b_shares[idx], sk_shares[idx])
                    key = self.shared[(min(i, j), max(i, j))]
                    self.inbox[j].append((i, encrypt(key, plaintext)))

    def online(self) -> float:
        from flwr.common.secure_aggregation.crypto.shamir import combine_shares
        from flwr.common.secure_aggregation.crypto.symmetric_encryption import (
            decrypt,
            generate_shared_key,
        )
        from flwr.common.secure_aggregation.ndarrays_arithmetic import (
            factor_combine,
            parameters_addition,
            parameters_mod,
            parameters_subtraction,
        )
        from flwr.common.secure_aggregation.quantization import quantize
        from flwr.common.secure_aggregation.secaggplus_utils import (
            pseudo_rand_gen,
            share_keys_plaintext_separate,
        )

        clipping, target, mod = 8.0, 1 << 22, 1 << 32  # Flower's defaults
        n = len(self.arrays)
        start = time.perf_counter()
        held: dict[int, list[bytes]] = {i: [self.own_share[i]] for i in self.own_share}
        masked = []
        for i, params in enumerate(self.arrays):
            for src, ciphertext in self.inbox[i]:  # stage 2 opens with the shares
                key = self.shared[(min(i, src), max(i, src))]
                actual, dst, seed_share, _ = share_keys_plaintext_separate(
                    decrypt(key, ciphertext))
                assert (actual, dst) == (src, i)
                held[src].append(seed_share)
            q = factor_combine(target, quantize(params, clipping, target))
            dims = [a.shape for a in q]
            q = parameters_addition(q, pseudo_rand_gen(self.seeds[i], mod, dims))
            for j in self.near[i]:
                key = (generate_shared_key(self.secret[i], self.public[j]) if self.agreement
                       else self.shared[(min(i, j), max(i, j))])
                mask = pseudo_rand_gen(key, mod, dims)
                q = parameters_addition(q, mask) if i > j else parameters_subtraction(q, mask)
            masked.append(parameters_mod(q, mod))
        total = masked[0]
        for other in masked[1:]:
            total = parameters_addition(total, other)
        for i in range(n):  # stage 3: the server rebuilds each seed from the shares it got
            seed = combine_shares(held[i]) if self.shares else self.seeds[i]
            total = parameters_subtraction(total, pseudo_rand_gen(seed, mod, dims))
        parameters_mod(total, mod)
        seconds = time.perf_counter() - start
        if self.shares:
            assert all(combine_shares(held[i]) == self.seeds[i] for i in range(min(n, 2)))
        return seconds


def fmt(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{median(values):7.3f} s ({low:.3f}-{high:.3f})"


def repeated(measure, name: str, work: int, args: argparse.Namespace,
             last: dict[str, tuple[int, float]]) -> list | None:
    """``--repeat`` runs of ``measure()`` (seconds, or fedsec's tuple), or None
    when the projection from the last size measured (time proportional to ``work``: masks,
    or for Flower's round with shares, masks times shares combined) exceeds the budget."""
    key = name
    if key in last:
        prev_work, prev_seconds = last[key]
        projected = prev_seconds * work / prev_work
        if projected > args.budget:
            print(f"  {name}: skipped, projected {projected:.0f} s for one run > budget "
                  f"{args.budget:.0f} s")
            return None
    runs = []
    for _ in range(args.repeat):
        runs.append(measure())
        seconds = sum(runs[-1][:2]) if isinstance(runs[-1], tuple) else runs[-1]
        if seconds * args.repeat > 3 * args.budget:
            break  # one long run is enough to report
    last[key] = (work, seconds)
    return runs


def bench(n: int, length: int, graph: str, degree: int, args: argparse.Namespace,
          flower: bool, last: dict[str, tuple[int, float]]) -> None:
    data = vectors(n, length)
    params = {} if graph == "complete" or degree >= n - 1 else {"n_neighbours": degree}
    k = n - 1 if not params else degree
    if args.agreement:
        params = {**params, "key_source": "agreement"}
    print(f"K={n} {graph} (k={k} neighbours, {n * k:,} masks of {length} words)")
    runs = repeated(lambda: fedsec_sum(data, params), f"fedsec {graph}", n * k, args, last)
    if runs is None:
        return
    setup, total, online = ([r[i] for r in runs] for i in range(3))
    floor = [aes_floor(n * k, length) for _ in range(len(runs))]
    ratio = [o / f for o, f in zip(online, floor, strict=True)]
    print(f"  fedsec secure_sum {fmt(total)}, online {fmt(online)}, key setup {fmt(setup)}"
          f" ({len(runs)} runs)")
    print(f"  AES floor         {fmt(floor)} | online / floor {median(ratio):.2f} "
          f"({min(ratio):.2f}-{max(ratio):.2f})")
    if not flower:
        return
    ours = [o + (s if args.agreement else 0.0) for o, s in zip(online, setup, strict=True)]
    for shares, label in ((False, "masking"), (True, "round")):
        if shares and not args.flower_shares:
            continue
        # set up on the first run (outside its timing), so a skipped one costs no setup
        setup = functools.cache(partial(FlowerRound, data, k, args.agreement, shares))
        theirs = repeated(lambda setup=setup: setup().online(), f"flower {label} {graph}",
                          n * k * (k if shares else 1), args, last)
        if theirs is None:
            continue
        lead = [t / median(ours) for t in theirs]
        print(f"  Flower SecAgg+ {label:7s} {fmt(theirs)} | Flower / fedsec "
              f"{'online + key setup' if args.agreement else 'online'} {median(lead):.1f}x "
              f"({min(lead):.1f}-{max(lead):.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parties", default="64,256,1024")
    parser.add_argument("--length", type=int, default=4096)
    parser.add_argument("--fraction", type=float, default=1 / 3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--graphs", default="complete,harary")
    parser.add_argument("--agreement", action="store_true")
    parser.add_argument("--flower-shares", action=argparse.BooleanOptionalAction, default=True,
                        help="also time Flower's round with its Shamir shares (decrypted by "
                        "the clients, combined by the server)")
    args = parser.parse_args()
    try:
        import flwr  # noqa: F401
        flower = True
    except ImportError:
        flower = False
        print("Flower not installed (pip install flwr): its columns are left out")
    print(f"vectors of {args.length} floats; harary degree for {args.fraction:.3f} corrupted "
          "senders at split probability <= 2**-40")
    fedsec_sum(vectors(8, args.length), {})  # warm up (imports, caches): not reported
    last: dict[str, tuple[int, float]] = {}
    for n in (int(p) for p in args.parties.split(",")):
        for graph in args.graphs.split(","):
            if graph == "complete":
                degree = n - 1
            else:
                from fedsec.backends.mask_graph import min_degree
                degree = min_degree(n, args.fraction)
            bench(n, args.length, graph, degree, args, flower, last)


if __name__ == "__main__":
    main()
