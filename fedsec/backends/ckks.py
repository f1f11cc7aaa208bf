"""CKKS approximate homomorphic encryption with TenSEAL.

Cheon, Kim, Kim and Song, "Homomorphic Encryption for Arithmetic of
Approximate Numbers", ASIACRYPT 2017, through TenSEAL's ``CKKSVector``.
Parameters are checked against the 128-bit classical security bounds of the
Homomorphic Encryption Standard (Albrecht et al., 2018: the largest total
coefficient modulus per ring degree). Long vectors are cut into chunks of N/2
slots. Every protected value carries a public bound on its magnitude and on
its approximation error, updated by each operation; operations that would
leave the scale or depth budget are refused instead of returning garbage.
No operation here rotates slots, so Galois keys are never generated.

In ``sum`` mode one sender (the key holder) makes the secret key and keeps
it; the others and the aggregator get the public context. The aggregator adds
ciphertexts and asks the key holder to decrypt the sum. A key holder makes one key
pair per run and receiver, which every group it decrypts for that receiver uses; its
public context carries no relinearisation keys (nothing here multiplies two
ciphertexts). TenSEAL draws its randomness from SEAL's own generator, so CKKS
transcripts differ between runs.

Trust: the key holder decrypts whatever the aggregator sends it, a single contribution
included; it cannot tell an aggregate from one party's ciphertext. A CKKS decryption carries
its approximation error, which depends on the secret key: a party that sees decryptions of
ciphertexts it chose learns about the key (Li and Micciancio, "On the Security of Homomorphic
Encryption on Approximate Numbers", EUROCRYPT 2021). ``flood_bits = k`` makes the key holder
add Gaussian noise of standard deviation ``2**k`` times the result's tracked error bound
(drawn from the operating system's generator) before it returns a decryption; 0 (the default)
returns decryptions as they are.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any
from weakref import WeakKeyDictionary

import numpy as np
import tenseal as ts

from fedsec.backends import envelope
from fedsec.backends.api import (
    SUM,
    Capabilities,
    KeyContext,
    MaskingBackend,
    Protected,
    keyholder_reveal,
    same_key_summands,
)
from fedsec.backends.fixed_point import check_range
from fedsec.declare import Declared, Float, Int, owner_of
from fedsec.errors import CapabilityError, ValidationError
from fedsec.keys import fingerprint
from fedsec.registry import register
from fedsec.validation import check_int, param_error
from fedsec.wire import Wire

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation

OWNER = "backend 'ckks'"
#: Largest total coefficient-modulus bits for 128-bit classical security (HE standard, Table 1).
SECURITY_BOUNDS = {1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881}
#: Error bounds relative to 2**-scale_bits, measured with margin on this library's defaults
#: (fresh encryption: about 1e-8 observed at scale 2**40; one plaintext multiplication and
#: rescale: about 3e-7).
FRESH_ERROR_FACTOR = 2.0**16
RESCALE_ERROR_FACTOR = 2.0**21


def check_security(poly_modulus_degree: int, coeff_mod_bit_sizes: Sequence[int]) -> None:
    """Refuse parameters outside the HE standard's 128-bit bounds, saying what is acceptable.

    Examples
    --------
    >>> check_security(8192, (60, 40, 40, 60))
    >>> check_security(4096, (60, 40, 40, 60))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedsec.errors.ValidationError: The 'coeff_mod_bit_sizes' parameter ... at most 109 bits ...
    """
    if poly_modulus_degree not in SECURITY_BOUNDS:
        raise param_error(OWNER, "poly_modulus_degree",
                          "one of " + ", ".join(map(str, SECURITY_BOUNDS)), poly_modulus_degree)
    budget = SECURITY_BOUNDS[poly_modulus_degree]
    if sum(coeff_mod_bit_sizes) > budget:
        raise param_error(
            OWNER, "coeff_mod_bit_sizes",
            f"a total of at most {budget} bits at poly_modulus_degree={poly_modulus_degree} for "
            "128-bit security (HE standard); use a larger degree or fewer/smaller moduli",
            tuple(coeff_mod_bit_sizes))


@register("backend", "ckks")
class CkksBackend(MaskingBackend):
    """CKKS approximate encryption (TenSEAL): chunked vectors, tracked error bounds; the key holder
    decrypts whatever it is sent, a single contribution included, and returns decryptions without
    noise flooding unless flood_bits is set.

    CKKS vectors (TenSEAL): approximate, with tracked error and refused overflows.
    """

    paper = "Cheon et al., Homomorphic Encryption for Arithmetic of Approximate Numbers, 2017"
    protection = "ckks"
    operations = frozenset({"add", "add_plain", "mul_plain_scalar", "mul_plain_elementwise",
                            "sum"})
    exact = False

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        poly_modulus_degree: Annotated[int, Int(min=1024)] = 8192
        """Ring degree N, one of 1024, 2048, ..., 32768: a ciphertext holds N/2 slots, and N caps
        the moduli's total bits (128-bit security)."""
        coeff_mod_bit_sizes: tuple[int, ...] = (60, 40, 40, 60)
        """Bit sizes of the coefficient moduli, at least two, each in [17, 60], total capped by N
        (218 at 8192); the middle ones give the multiplicative depth."""
        scale_bits: int = 40
        """log2 of the CKKS scale (the fixed-point precision): at least 20 and at most the smallest
        middle modulus."""
        max_abs: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1024.0
        """Public bound on the magnitude of encrypted values, below 2**(first modulus bits -
        scale_bits - 1); larger values are refused."""
        flood_bits: Annotated[int, Int(min=0, max=60)] = 0
        """k > 0: the key holder adds Gaussian noise of std 2**k times the tracked error bound to
        each decryption; 0: decryptions as they are."""

        def __post_init__(self) -> None:
            owner = owner_of(self)
            sizes = tuple(self.coeff_mod_bit_sizes)
            if len(sizes) < 2 or any(not isinstance(b, int) or not 17 <= b <= 60 for b in sizes):
                raise param_error(owner, "coeff_mod_bit_sizes",
                                  "at least two integers in [17, 60]", sizes)
            check_security(self.poly_modulus_degree, sizes)
            check_int(self.scale_bits, owner=owner, name="scale_bits", min_value=20,
                      max_value=min(sizes[1:-1] or sizes[:1]))  # bounded by another field
            if self.max_abs >= self.value_budget:
                raise param_error(owner, "max_abs",
                                  f"< {self.value_budget:g} (2**(first modulus bits - scale_bits "
                                  "- 1): larger values do not decrypt)", self.max_abs)

        @property
        def value_budget(self) -> float:
            return float(2 ** (self.coeff_mod_bit_sizes[0] - self.scale_bits - 1))

        @property
        def depth(self) -> int:
            return len(self.coeff_mod_bit_sizes) - 2

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.slots = self.params.poly_modulus_degree // 2

    @property
    def caps(self) -> Capabilities:
        return Capabilities(operations=self.operations, exact=False, depth=self.params.depth,
                            slots=self.slots, deterministic=False)

    def _fresh_error(self) -> float:
        return FRESH_ERROR_FACTOR * 2.0**-self.params.scale_bits

    # -- keys --------------------------------------------------------------------
    def make_context(self, federation: Federation, *, senders: tuple[str, ...], receiver: str,
                     mode: str) -> KeyContext:
        """The keys of one group: the key holder's own pair, made once per run and receiver.

        Groups whose key holder decrypts for the same receiver share its key (in ``direct``
        mode the receiver holds it, so every sender to one receiver encrypts under the
        receiver's key); the public part goes to each party of the group that lacks it. Groups
        with another key holder or receiver get keys of their own, so no party ever holds a
        secret key it did not make.
        """
        keyholder = sorted(senders)[0] if mode == SUM else receiver
        runs: WeakKeyDictionary[Federation, dict[tuple[str, str], _Keys]] = (
            self.__dict__.setdefault("_keys", WeakKeyDictionary()))
        held = runs.setdefault(federation, {})
        keys = held.get((keyholder, receiver))
        if keys is None:
            keys = held[(keyholder, receiver)] = self._new_keys(federation, keyholder)
        others = [q for q in dict.fromkeys([*senders, receiver])
                  if q != keyholder and keys.public_id not in federation.party(q).keys]
        if others:
            with federation.network.stage("key_setup"):
                federation.deliver_key(keyholder, keys.public_id, keys.public, to=others,
                                       public=True, meta=keys.meta)
        parties = dict.fromkeys([*senders, receiver], keys.public_context)
        parties[keyholder] = keys.secret_context
        return KeyContext(backend=self.name, senders=senders, receiver=receiver,
                          key_id=keys.key_id, mode=mode, holders={keys.key_id: (keyholder,)},
                          state={"keyholder": keyholder, "contexts": parties})

    def _new_keys(self, federation: Federation, keyholder: str) -> _Keys:
        """A fresh key pair made by ``keyholder``; the public part without relinearisation keys
        (no operation here multiplies two ciphertexts), recorded in full in its hold record."""
        p = self.params
        net = federation.network
        with net.stage("key_setup"):
            with net.compute(keyholder):
                secret_context = ts.context(ts.SCHEME_TYPE.CKKS,
                                            poly_modulus_degree=p.poly_modulus_degree,
                                            coeff_mod_bit_sizes=list(p.coeff_mod_bit_sizes))
                secret_context.global_scale = 2.0**p.scale_bits
                public = secret_context.serialize(save_relin_keys=False)
                secret = secret_context.serialize(save_secret_key=True, save_relin_keys=False)
            key_id = f"ckks:{fingerprint(public)[:16]}"
            meta = {"poly_modulus_degree": p.poly_modulus_degree,
                    "coeff_mod_bit_sizes": list(p.coeff_mod_bit_sizes), "scale_bits": p.scale_bits,
                    "galois_keys": False, "relin_keys": False}
            federation.hold_key(keyholder, key_id, secret, meta=meta)
            federation.hold_key(keyholder, f"{key_id}:public", public, public=True, meta=meta)
        # every other party of the run holds the same public key: one context serves them all
        return _Keys(key_id, public, meta, secret_context, ts.context_from(public))

    # -- protect and reveal --------------------------------------------------------
    def protect(self, context: KeyContext, sender: str, values: np.ndarray, *,
                nonce: str) -> Protected:
        arr = check_range(values, self.params.max_abs, what=f"CKKS encryption at {sender!r}")
        ctx = context.state["contexts"][sender]
        chunks = [ts.ckks_vector(ctx, arr[i : i + self.slots])
                  for i in range(0, max(arr.size, 1), self.slots)]
        return Protected(self.name, context.key_id, arr.size, chunks,
                         {"summands": 1, "level": self.params.depth, "bound": self.params.max_abs,
                          "error_bound": self._fresh_error()})

    def reveal(self, federation: Federation, context: KeyContext,
               protected: Protected) -> np.ndarray:
        secret_key = context.state["contexts"][context.state["keyholder"]].secret_key()
        sigma = protected.info["error_bound"] * 2.0 ** self.params.flood_bits \
            if self.params.flood_bits else 0.0

        def open_flooded(p: Protected) -> np.ndarray:
            values = _decrypt(p, secret_key)
            if sigma:  # the key holder's own noise, from the operating system's generator
                noise = np.random.default_rng(secrets.randbits(128)).normal(0.0, sigma,
                                                                            values.shape)
                values = values + noise
            return values

        return keyholder_reveal(federation, self, context, protected, open_flooded,
                                result_meta={"error_bound": protected.info["error_bound"],
                                             "flood_sigma": sigma})

    # -- wire ------------------------------------------------------------------------
    def describe_payload(self, protected: Protected) -> dict[str, Any]:
        info = protected.info
        return {"elements": protected.length, "ciphertexts": len(protected.data),
                "scale_bits": self.params.scale_bits, "level": info["level"],
                "summands": info["summands"], "bound": info["bound"],
                "error_bound": info["error_bound"],
                "poly_modulus_degree": self.params.poly_modulus_degree}

    def to_wire(self, protected: Protected) -> Wire:
        blobs = [v.serialize() for v in protected.data]
        header = {"backend": self.name, "key_id": protected.key_id,
                  "lengths": [len(b) for b in blobs], **self.describe_payload(protected)}
        return Wire(envelope.wrap(header, b"".join(blobs)), self.protection, protected.key_id,
                    self.describe_payload(protected))

    def from_wire(self, context: KeyContext, party: str, wire: Wire) -> Protected:
        header, body = envelope.unwrap_payload(wire.payload, scheme="CKKS", key_id=context.key_id)
        chunks = _chunks(context.state["contexts"][party], header, body)
        return Protected(self.name, context.key_id, header["elements"], chunks,
                         {k: header[k] for k in ("summands", "level", "bound", "error_bound")})

    @classmethod
    def open_payload(cls, payload: Any, meta: Mapping[str, Any],
                     keys: Mapping[str, bytes]) -> np.ndarray:
        header, body = envelope.unwrap(payload)
        ctx = ts.context_from(keys[header["key_id"]])
        if not ctx.is_private():
            raise CapabilityError("Opening a CKKS payload needs the secret context.")
        chunks = _chunks(ctx, header, body)
        return _decrypt(Protected(cls.name, header["key_id"], header["elements"], chunks, {}))

    # -- operations ----------------------------------------------------------------------
    def _checked(self, key_id: str, length: int, data: list[Any],
                 info: dict[str, Any]) -> Protected:
        budget = self.params.value_budget
        if info["bound"] >= budget:
            raise CapabilityError(
                f"This CKKS operation could produce values up to {info['bound']:.6g}, beyond the "
                f"{budget:g} the scale budget can decrypt; lower max_abs or use a larger first "
                "coefficient modulus."
            )
        return Protected(self.name, key_id, length, data, info)

    def add(self, a: Protected, b: Protected) -> Protected:
        return self.sum([a, b])

    def sum(self, items: Sequence[Protected]) -> Protected:
        first = same_key_summands(items, "CKKS")
        if any(other.info["level"] != first.info["level"] for other in items[1:]):
            raise CapabilityError("CKKS vectors at different levels cannot be added here.")
        if len(items) == 1:
            data = list(first.data)  # ciphertexts are never changed in place: safe to share
        else:  # the first sum out of place, the rest into it (a copy would serialise the context)
            data = [mine + theirs for mine, theirs in zip(first.data, items[1].data, strict=True)]
            for other in items[2:]:
                for mine, theirs in zip(data, other.data, strict=True):
                    mine.add_(theirs)
        info = {"summands": sum(p.info["summands"] for p in items), "level": first.info["level"],
                "bound": sum(p.info["bound"] for p in items),
                "error_bound": sum(p.info["error_bound"] for p in items)}
        return self._checked(first.key_id, first.length, data, info)

    def add_plain(self, a: Protected, values: np.ndarray) -> Protected:
        arr = check_range(values, self.params.max_abs, what="CKKS add_plain")
        data = [chunk + arr[i * self.slots : (i + 1) * self.slots].tolist()
                for i, chunk in enumerate(a.data)]
        info = {**a.info, "bound": a.info["bound"] + self.params.max_abs,
                "error_bound": a.info["error_bound"] + self._fresh_error()}
        return self._checked(a.key_id, a.length, data, info)

    def mul_plain(self, a: Protected, factor: float | np.ndarray) -> Protected:
        if a.info["level"] < 1:
            raise CapabilityError(
                f"The CKKS multiplicative depth budget ({self.params.depth}) is used up: another "
                "plaintext multiplication would exceed the scale budget. Add a middle "
                "coefficient modulus for more depth."
            )
        factors = np.asarray(factor, dtype=np.float64)
        magnitude = float(np.max(np.abs(factors))) if factors.size else 0.0
        if factors.ndim == 0:
            data = [chunk * float(factors) for chunk in a.data]
        else:
            if factors.size != a.length:
                raise ValidationError(
                    f"An element-wise factor of length {factors.size} does not match a vector of "
                    f"length {a.length}."
                )
            data = [chunk * factors[i * self.slots : (i + 1) * self.slots].tolist()
                    for i, chunk in enumerate(a.data)]
        info = {**a.info, "level": a.info["level"] - 1, "bound": a.info["bound"] * magnitude,
                "error_bound": a.info["error_bound"] * magnitude
                + RESCALE_ERROR_FACTOR * 2.0**-self.params.scale_bits * max(1.0, a.info["bound"])}
        return self._checked(a.key_id, a.length, data, info)


@dataclass(frozen=True)
class _Keys:
    """One key holder's CKKS keys in a run: the serialized public context, its record's
    metadata, and the in-memory contexts (with and without the secret key)."""

    key_id: str
    public: bytes
    meta: dict[str, Any]
    secret_context: Any
    public_context: Any

    @property
    def public_id(self) -> str:
        return f"{self.key_id}:public"


def _decrypt(protected: Protected, secret_key: Any = None) -> np.ndarray:
    values = np.concatenate([np.asarray(chunk.decrypt(secret_key), dtype=np.float64)
                             for chunk in protected.data]) if protected.data else np.zeros(0)
    return values[: protected.length]


def _chunks(ctx: Any, header: Mapping[str, Any], body: bytes) -> list[Any]:
    if sum(header["lengths"]) != len(body):
        raise ValidationError("A CKKS payload's length does not match its header.")
    out, offset = [], 0
    for size in header["lengths"]:
        out.append(ts.ckks_vector_from(ctx, body[offset : offset + size]))
        offset += size
    return out


