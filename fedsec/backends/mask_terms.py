"""The mask terms of the noise backend: which keys mask a vector, and applying them.

A masked vector carries its terms in the clear, ``{key_id@nonce: coefficient}``:
the masks added to it, with their signs and multiplicities. Adding masked
vectors adds their terms; a vector opens once its holder has every key its
remaining terms name (a complete pairwise sum has none left).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.backends import prg
from fedsec.backends.api import KeyContext
from fedsec.errors import CapabilityError
from fedsec.keys import KeyStore


def pair_key_id(a: str, b: str) -> str:
    """Key id of the mask key two senders share (order-free)."""
    first, second = sorted((a, b))
    return f"noise:pair:{first}:{second}"


def direct_key_id(sender: str, receiver: str) -> str:
    """Key id of the mask key a sender shares with its designated remover."""
    return f"noise:direct:{sender}:{receiver}"


def pairwise_terms(sender: str, senders: Sequence[str], nonce: str) -> dict[str, int]:
    """The mask terms ``{key_id@nonce: ±1}`` sender ``sender`` adds in a pairwise sum."""
    return {f"{pair_key_id(sender, other)}@{nonce}": (1 if sender < other else -1)
            for other in senders if other != sender}


def apply_masks(words: np.ndarray, terms: Mapping[str, int],
                keys: Mapping[str, bytes] | KeyStore, sign: int = 1, *, in_place: bool = False,
                ciphers: dict[str, Any] | None = None) -> np.ndarray:
    """``words + sign * sum(coeff * PRG(key, nonce))`` modulo 2**64.

    ``keys`` holds the material of every key the terms name (a party's key
    store, or a mapping). ``in_place`` reuses ``words`` (a fresh uint64 array
    the caller owns). ``ciphers`` keeps the expanded AES key per key id across
    calls (filled as keys are first used), so a key is expanded once per run,
    not once per mask; a cached key is used only where ``keys`` holds it.
    """
    out = words if in_place else np.array(words, dtype=np.uint64, copy=True)
    ciphers = {} if ciphers is None else ciphers
    streams: dict[str, prg.MaskStream] = {}
    for term, coeff in terms.items():
        if coeff == 0:
            continue
        key_id, _, nonce = term.partition("@")
        stream = streams.get(nonce)
        if stream is None:
            stream = streams[nonce] = prg.MaskStream(nonce, out.size)
        cipher = ciphers.get(key_id)
        if cipher is None:
            cipher = ciphers[key_id] = prg.block_cipher(_material(keys, key_id))
        elif key_id not in keys:
            _material(keys, key_id)  # raises: the cache is no licence to use a key not held
        stream.add(out, cipher, sign * coeff)
    return out


def _material(keys: Mapping[str, bytes] | KeyStore, key_id: str) -> bytes:
    if isinstance(keys, KeyStore):
        return keys.get(key_id)  # names the party and what it holds when it lacks the key
    if key_id not in keys:
        raise CapabilityError(f"Removing this mask needs key {key_id}, which is not held.")
    return keys[key_id]


def merge_terms(*items: Mapping[str, int], scale: int = 1) -> dict[str, int]:
    """Add mask-term coefficients; terms that cancel disappear."""
    out: dict[str, int] = {}
    for terms in items:
        for term, coeff in terms.items():
            out[term] = out.get(term, 0) + scale * coeff
    return {t: c for t, c in out.items() if c != 0}


def key_ids_of(terms: Mapping[str, int]) -> str:
    """The keys needed to remove ``terms``, comma-joined (empty when none remain)."""
    return ",".join(sorted({t.partition("@")[0] for t, c in terms.items() if c}))



@dataclass(frozen=True)
class SumPlan:
    """One sender's pairwise masks, resolved once per run: its (key id, sign) terms in
    :func:`pairwise_terms` order, the expanded keys it adds and subtracts, its key ids."""

    terms: tuple[tuple[str, int], ...]
    adds: tuple[Any, ...]
    subtracts: tuple[Any, ...]
    key_ids: str


def sum_plan(context: KeyContext, sender: str) -> SumPlan:
    """``sender``'s plan in a pairwise sum, built on first use and kept in the context."""
    plans = context.state.setdefault("plans", {})
    plan = plans.get(sender)
    if plan is None:
        keys, ciphers = context.state["keystores"][sender], context.state["ciphers"]
        terms = tuple((pair_key_id(sender, other), 1 if sender < other else -1)
                      for other in context.state["neighbours"][sender] if other != sender)
        resolved = []
        for key_id, sign in terms:
            cipher = ciphers.get(key_id)
            if cipher is None or key_id not in keys:
                cipher = ciphers[key_id] = prg.block_cipher(keys.get(key_id))
            resolved.append((cipher, sign))
        plan = plans[sender] = SumPlan(
            terms, tuple(c for c, sign in resolved if sign > 0),
            tuple(c for c, sign in resolved if sign < 0),
            ",".join(sorted({key_id for key_id, _ in terms})))
    return plan
