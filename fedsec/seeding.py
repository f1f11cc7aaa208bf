"""Simulation randomness derived from a root seed.

Every stochastic step takes a :class:`numpy.random.Generator` spawned from
a root seed's :class:`numpy.random.SeedSequence`, keyed by a purpose string, so
adding a new consumer never shifts another consumer's stream. A run has two roots: its
public ``seed`` (which rows are test rows, which party holds which rows: a scenario names
it) and its ``secret_seed`` (everything a party keeps: its random stream, defence noise,
shared seeds, initial weights, keys in simulation mode), random unless the user pins it
and kept only in the private store (:func:`new_secret_seed`, :func:`seed_commitment`).
Keys and masks a backend agrees between parties do not come from here
(see :mod:`fedsec.backends`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import numpy as np


def purpose_key(purpose: str) -> tuple[int, ...]:
    """Map a purpose string to a stable tuple of 32-bit words."""
    digest = hashlib.sha256(purpose.encode("utf-8")).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def seed_sequence(seed: int, purpose: str) -> np.random.SeedSequence:
    """The SeedSequence for ``purpose`` under root ``seed``.

    Examples
    --------
    >>> a = np.random.default_rng(seed_sequence(7, "party/alice"))
    >>> b = np.random.default_rng(seed_sequence(7, "party/alice"))
    >>> bool(a.random() == b.random())
    True
    """
    return np.random.SeedSequence(entropy=seed, spawn_key=purpose_key(purpose))


def generator(seed: int, purpose: str) -> np.random.Generator:
    """A Generator for ``purpose`` under root ``seed``."""
    return np.random.default_rng(seed_sequence(seed, purpose))


def keyed_generator(material: bytes, *stream: int) -> np.random.Generator:
    """The Generator every holder of the key ``material`` derives alike (a seed shared
    through the network: FedCG's landmark seed, FDSKL's direction blocks, FedGraph's
    clustering seed), one stream per ``stream`` index: the key's little-endian 32-bit
    words, then the indices, as the SeedSequence's entropy.

    Examples
    --------
    >>> a, b = keyed_generator(bytes(range(32)), 3), keyed_generator(bytes(range(32)), 3)
    >>> bool(a.random() == b.random())
    True
    >>> bool(keyed_generator(bytes(range(32)), 4).random() == keyed_generator(
    ...     bytes(range(32)), 3).random())
    False
    """
    words = np.frombuffer(material[: len(material) - len(material) % 4], dtype="<u4")
    return np.random.default_rng([*words.tolist(), *(int(i) for i in stream)])


SECRET_BITS = 128
"""A fresh secret seed's size: far beyond any search."""


def new_secret_seed() -> int:
    """A fresh secret seed from the operating system's randomness (``SECRET_BITS`` bits)."""
    return secrets.randbits(SECRET_BITS)


def seed_commitment(seed: int, secret_seed: int) -> str:
    """What a transcript's header records of the run's seeds: a keyed hash (hex) that binds
    them without showing either.

    The run's ``seed`` is public (a scenario names it: 0, 1, ...); the ``secret_seed`` is the
    root of everything a party keeps (its random stream, keys in simulation mode, noise,
    shared seeds, initial weights), lives only in the private store, and keys this hash
    (HMAC-SHA-256), so the header gives a search over seeds nothing to test against. A
    secret seed the user pinned to a small number (for reproduction) can of course be
    found by trying each; a random one (the default, ``SECRET_BITS`` bits) cannot.

    Examples
    --------
    >>> seed_commitment(7, 1) == seed_commitment(7, 1) != seed_commitment(7, 2)
    True
    >>> seed_commitment(7, 1) != seed_commitment(8, 1)
    True
    """
    key = hashlib.sha256(b"fedsec-secret-seed-v2\x00" + str(int(secret_seed)).encode()).digest()
    return hmac.new(key, b"fedsec-seed-commitment-v2\x00" + str(int(seed)).encode(),
                    hashlib.sha256).hexdigest()
