"""Paillier additive homomorphic encryption with packed fixed-point plaintexts.

Paillier, "Public-Key Cryptosystems Based on Composite Degree Residuosity
Classes", EUROCRYPT 1999; keys and decryption from python-paillier (``phe``)
with gmpy2. Several fixed-point values share one plaintext (slot packing with
per-slot headroom, overflow checked), one exponent ``-fraction_bits`` is
pinned for every value so the exponent reveals nothing about magnitudes,
obfuscators ``r**n`` are precomputed off the critical path, and every
ciphertext leaves a party freshly randomised. Ciphertexts travel as
fixed-width big-endian integers in a versioned envelope.

In ``sum`` mode one sender (the key holder) makes the key pair and keeps the
secret key; the others and the aggregator get the public key. The aggregator
sums ciphertexts, re-randomises the sum and asks the key holder to decrypt it,
so it learns the sum and nothing else; the key holder sees only the sum too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import gmpy2
import numpy as np

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
from fedsec.backends.fixed_point import check_range, pack, slot_width, unpack
from fedsec.backends.paillier_keys import (
    KeyedStream,
    ObfuscatorPool,
    generate_keypair,
    private_bytes,
    private_from_bytes,
    public_bytes,
)
from fedsec.declare import Bool, Choice, Declared, Float, Int, owner_of
from fedsec.errors import CapabilityError, ValidationError
from fedsec.keys import fingerprint
from fedsec.registry import register
from fedsec.validation import param_error
from fedsec.wire import Wire

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation

SECURE_KEY_BITS = (2048, 3072, 4096)
KEY_SOURCES = ("simulation", "secrets")


@dataclass(frozen=True)
class Packing:
    """How values sit in a plaintext: public, the same for every party."""

    fraction_bits: int
    integer_bits: int
    headroom_bits: int
    slots: int

    @property
    def max_summands(self) -> int:
        return 1 << self.headroom_bits

    def as_dict(self) -> dict[str, int]:
        return {"fraction_bits": self.fraction_bits, "integer_bits": self.integer_bits,
                "headroom_bits": self.headroom_bits, "slots": self.slots}


def packing_for(key_bits: int, fraction_bits: int, max_abs: float, headroom_bits: int) -> Packing:
    """The packing a key size allows (each plaintext stays below the modulus)."""
    integer_bits = max(1, math.ceil(math.log2(max_abs * (1 + 2.0**-fraction_bits))))
    stride = slot_width(fraction_bits, integer_bits) + headroom_bits
    slots = (key_bits - 2) // stride
    if slots < 1:
        raise ValidationError(
            f"A {key_bits}-bit key cannot hold one {stride}-bit slot; lower fraction_bits, max_abs "
            "or headroom_bits."
        )
    return Packing(fraction_bits, integer_bits, headroom_bits, slots)


def encrypt_packed(plaintexts: Sequence[int], n: gmpy2.mpz,
                   pool: ObfuscatorPool) -> list[gmpy2.mpz]:
    """``(1 + m n) r^n mod n^2`` for each packed plaintext (g = n + 1)."""
    n2 = n * n
    return [gmpy2.f_mod((1 + m * n) * pool.take(), n2) for m in plaintexts]


def decrypt_packed(ciphertexts: Sequence[gmpy2.mpz], private: Any) -> list[int]:
    """Packed plaintexts of ``ciphertexts`` (CRT decryption by python-paillier)."""
    return [private.raw_decrypt(int(c)) for c in ciphertexts]


@register("backend", "paillier")
class PaillierBackend(MaskingBackend):
    """Paillier encryption: packed fixed-point slots, pinned exponent, re-randomised; the key holder
    decrypts whatever it is sent, a single contribution included.

    Paillier encryption (python-paillier keys), packed fixed point, precomputed obfuscators.
    """

    paper = ("Paillier, Public-Key Cryptosystems Based on Composite Degree Residuosity Classes, "
             "EUROCRYPT 1999")
    protection = "paillier"
    operations = frozenset({"add", "add_plain", "mul_plain_scalar", "sum"})
    exact = True

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        key_bits: Annotated[int, Int(min=256)] = 3072
        """Modulus size of the key pair: 2048, 3072 (about 128-bit security) or 4096; smaller (at
        least 256) only with insecure_test_keys."""
        fraction_bits: Annotated[int, Int(min=1, max=128)] = 36
        """Fixed-point fraction bits: every value is encoded with the pinned exponent
        -fraction_bits."""
        max_abs: Annotated[float, Float(min=0.0, min_inclusive=False)] = 65536.0
        """Public bound on the magnitude of encrypted values (sets each packed slot's integer bits);
        larger values are refused."""
        headroom_bits: Annotated[int, Int(min=1, max=32)] = 10
        """Spare bits per packed slot: a sum may add up to 2**headroom_bits ciphertexts without
        overflow."""
        key_source: Annotated[str, Choice(*KEY_SOURCES)] = "simulation"
        """Key pairs and obfuscators from the run's secret seed (simulation: reproducible,
        insecure) or from operating-system randomness (secrets)."""
        insecure_test_keys: Annotated[bool, Bool()] = False
        """Allow key_bits below 2048, for fast tests only."""

        def __post_init__(self) -> None:
            if self.key_bits not in SECURE_KEY_BITS and not self.insecure_test_keys:
                raise param_error(
                    owner_of(self), "key_bits",
                    "2048, 3072 (the default, about 128-bit security) or 4096; smaller keys are "
                    "refused unless insecure_test_keys=true, for tests only", self.key_bits)
            packing_for(self.key_bits, self.fraction_bits, self.max_abs, self.headroom_bits)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        self.packing = packing_for(p.key_bits, p.fraction_bits, p.max_abs, p.headroom_bits)

    @property
    def caps(self) -> Capabilities:
        return Capabilities(operations=self.operations, exact=True, slots=self.packing.slots,
                            deterministic=self.params.key_source == "simulation")

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["insecure_simulation_keys"] = self.params.key_source == "simulation"
        # a test-sized key is insecure whatever its source
        out["insecure_key_size"] = self.params.key_bits not in SECURE_KEY_BITS
        out["packing"] = self.packing.as_dict()
        return out

    # -- keys --------------------------------------------------------------------
    def make_context(self, federation: Federation, *, senders: tuple[str, ...], receiver: str,
                     mode: str) -> KeyContext:
        keyholder = sorted(senders)[0] if mode == SUM else receiver
        simulation = self.params.key_source == "simulation"
        net = federation.network

        def stream(label: str) -> KeyedStream | None:
            if not simulation:
                return None
            return KeyedStream(f"fedsec-paillier\x00{federation.secret_seed}\x00{label}".encode())

        with net.stage("key_setup"):
            with net.compute(keyholder):
                public, private = generate_keypair(self.params.key_bits,
                                                   stream(f"{keyholder}/{receiver}/{mode}"))
            material = public_bytes(public)
            key_id = f"paillier:{fingerprint(material)[:16]}"
            meta = {"key_bits": self.params.key_bits, "key_source": self.params.key_source}
            federation.hold_key(keyholder, key_id, private_bytes(private), meta=meta)
            others = [p for p in dict.fromkeys([*senders, receiver]) if p != keyholder]
            federation.share_key(keyholder, f"{key_id}:public", material, to=others, public=True,
                                 meta=meta)
        n = gmpy2.mpz(public.n)
        return KeyContext(
            backend=self.name, senders=senders, receiver=receiver, key_id=key_id, mode=mode,
            holders={key_id: (keyholder,)},
            state={"n": n, "keyholder": keyholder, "private": private,
                   "pools": {p: ObfuscatorPool(int(n), stream(f"obfuscators/{p}"))
                             for p in dict.fromkeys([*senders, receiver])}},
        )

    def prepare(self, context: KeyContext, party: str, n_values: int) -> None:
        context.state["pools"][party].fill(math.ceil(n_values / self.packing.slots))

    # -- protect and reveal --------------------------------------------------------
    def protect(self, context: KeyContext, sender: str, values: np.ndarray, *,
                nonce: str) -> Protected:
        arr = check_range(values, self.params.max_abs, what=f"Paillier encryption at {sender!r}")
        k = self.packing
        plaintexts = pack(arr, fraction_bits=k.fraction_bits, integer_bits=k.integer_bits,
                          headroom_bits=k.headroom_bits, slots=k.slots)
        n = context.state["n"]
        cts = encrypt_packed(plaintexts, n, context.state["pools"][sender])
        return Protected(self.name, context.key_id, arr.size, cts, {"summands": 1, "n2": n * n})

    def reveal(self, federation: Federation, context: KeyContext,
               protected: Protected) -> np.ndarray:
        self._check_summands(protected)
        if context.receiver != context.state["keyholder"]:
            with federation.network.compute(context.receiver):
                # nothing leaves a party without fresh randomness
                protected = self._rerandomize(context, context.receiver, protected)
        return keyholder_reveal(federation, self, context, protected,
                                lambda p: self._decrypt(context, p))

    def _decrypt(self, context: KeyContext, protected: Protected) -> np.ndarray:
        k = self.packing
        packed = decrypt_packed(protected.data, context.state["private"])
        return unpack(packed, protected.length, n_summands=protected.info["summands"],
                      fraction_bits=k.fraction_bits, integer_bits=k.integer_bits,
                      headroom_bits=k.headroom_bits, slots=k.slots)

    def _rerandomize(self, context: KeyContext, party: str, protected: Protected) -> Protected:
        n2 = _modulus_squared(protected)
        pool = context.state["pools"][party]
        data = [gmpy2.f_mod(c * pool.take(), n2) for c in protected.data]
        return Protected(self.name, protected.key_id, protected.length, data, dict(protected.info))

    def _check_summands(self, protected: Protected) -> None:
        if protected.info["summands"] > self.packing.max_summands:
            raise CapabilityError(
                f"A Paillier value sums {protected.info['summands']} terms, more than the "
                f"{self.packing.max_summands} its slots' headroom allows; raise headroom_bits."
            )

    # -- wire ------------------------------------------------------------------------
    def describe_payload(self, protected: Protected) -> dict[str, Any]:
        width = 2 * ((self.params.key_bits + 7) // 8)
        return {"elements": protected.length, "ciphertexts": len(protected.data),
                "bytes": width * len(protected.data), "summands": protected.info["summands"],
                "exponent": -self.packing.fraction_bits, "key_bits": self.params.key_bits,
                **self.packing.as_dict()}

    def to_wire(self, protected: Protected) -> Wire:
        width = 2 * ((self.params.key_bits + 7) // 8)
        header = {"backend": self.name, "key_id": protected.key_id,
                  **self.describe_payload(protected)}
        body = b"".join(c.to_bytes(width, "big") for c in protected.data)
        return Wire(envelope.wrap(header, body), self.protection, protected.key_id,
                    self.describe_payload(protected))

    def from_wire(self, context: KeyContext, party: str, wire: Wire) -> Protected:
        header, body = envelope.unwrap_payload(wire.payload, scheme="Paillier",
                                               key_id=context.key_id)
        n = context.state["n"]
        return Protected(self.name, context.key_id, header["elements"], _ciphertexts(header, body),
                         {"summands": header["summands"], "n2": n * n})

    @classmethod
    def open_payload(cls, payload: Any, meta: Mapping[str, Any],
                     keys: Mapping[str, bytes]) -> np.ndarray:
        header, body = envelope.unwrap(payload)
        private = private_from_bytes(keys[header["key_id"]])
        packed = decrypt_packed(_ciphertexts(header, body), private)
        return unpack(packed, header["elements"], n_summands=header["summands"],
                      fraction_bits=header["fraction_bits"], integer_bits=header["integer_bits"],
                      headroom_bits=header["headroom_bits"], slots=header["slots"])

    # -- operations ----------------------------------------------------------------------
    def add(self, a: Protected, b: Protected) -> Protected:
        return self.sum([a, b])

    def sum(self, items: Sequence[Protected]) -> Protected:
        first = same_key_summands(items, "Paillier")
        n2 = _modulus_squared(first)
        data = list(first.data)
        for other in items[1:]:
            data = [gmpy2.f_mod(x * y, n2) for x, y in zip(data, other.data, strict=True)]
        summed = Protected(self.name, first.key_id, first.length, data,
                           {"summands": sum(p.info["summands"] for p in items), "n2": n2})
        self._check_summands(summed)
        return summed

    def add_plain(self, a: Protected, values: np.ndarray) -> Protected:
        arr = check_range(values, self.params.max_abs, what="Paillier add_plain")
        k = self.packing
        plaintexts = pack(arr, fraction_bits=k.fraction_bits, integer_bits=k.integer_bits,
                          headroom_bits=k.headroom_bits, slots=k.slots)
        n2 = _modulus_squared(a)
        n = gmpy2.isqrt(n2)
        data = [gmpy2.f_mod(c * (1 + m * n), n2) for c, m in zip(a.data, plaintexts, strict=True)]
        out = Protected(self.name, a.key_id, a.length, data,
                        {"summands": a.info["summands"] + 1, "n2": n2})
        self._check_summands(out)
        return out

    def mul_plain(self, a: Protected, factor: float | np.ndarray) -> Protected:
        if np.ndim(factor) != 0:
            raise self._lacks("mul_plain_elementwise")
        if float(factor) != int(factor) or int(factor) < 1:
            raise CapabilityError(
                "Packed Paillier slots can be multiplied by positive integers only (a negative or "
                f"fractional factor would corrupt neighbouring slots). Got {factor!r}."
            )
        k = int(factor)
        n2 = _modulus_squared(a)
        out = Protected(self.name, a.key_id, a.length, [gmpy2.powmod(c, k, n2) for c in a.data],
                        {"summands": a.info["summands"] * k, "n2": n2})
        self._check_summands(out)
        return out


def _ciphertexts(header: Mapping[str, Any], body: bytes) -> list[gmpy2.mpz]:
    width = 2 * ((header["key_bits"] + 7) // 8)
    if len(body) != width * header["ciphertexts"]:
        raise ValidationError("A Paillier payload's length does not match its header.")
    return [gmpy2.mpz(int.from_bytes(body[i : i + width], "big"))
            for i in range(0, len(body), width)]


def _modulus_squared(protected: Protected) -> gmpy2.mpz:
    n2 = protected.info.get("n2")
    if n2 is None:
        raise CapabilityError("This Paillier value carries no modulus; rebuild it with from_wire.")
    return n2
