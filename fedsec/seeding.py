"""Simulation randomness derived from one root seed.

Every stochastic step takes a :class:`numpy.random.Generator` spawned from
the run's :class:`numpy.random.SeedSequence`, keyed by a purpose string, so
adding a new consumer never shifts another consumer's stream. Cryptographic
keys and masks do not come from here (see :mod:`fedsec.backends`).
"""

from __future__ import annotations

import hashlib

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


def seed_commitment(seed: int) -> str:
    """What a transcript's header records of the run's seed: a hash that binds it without
    showing it (hex).

    The seed is the auditor's: it stays in ``result.json`` and the private store, and every
    party's secret derives from it, so no adversary's View may hold it. The commitment hides
    only what cannot be guessed: a small seed (0, 1, ...) is found by trying each; an audit of
    adversaries who might try uses a random 128-bit seed.

    Examples
    --------
    >>> seed_commitment(7) == seed_commitment(7) != seed_commitment(8)
    True
    """
    return hashlib.sha256(b"fedsec-seed-commitment-v1\x00" + str(int(seed)).encode()).hexdigest()
