"""The plain backend: no protection, the baseline every audit compares against."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fedsec.backends.api import KeyContext, MaskingBackend, Protected
from fedsec.errors import ValidationError
from fedsec.registry import register
from fedsec.wire import Wire

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation


@register("backend", "plain")
class PlainBackend(MaskingBackend):
    """No protection: values travel in the clear (the baseline).

    Values travel as they are; anyone on the link reads them.
    """

    protection = "plain"
    operations = frozenset({"add", "add_plain", "mul_plain_scalar", "mul_plain_elementwise",
                            "sum"})
    exact = True

    def make_context(self, federation: Federation, *, senders: tuple[str, ...], receiver: str,
                     mode: str) -> KeyContext:
        return KeyContext(backend=self.name, senders=senders, receiver=receiver, key_id="",
                          mode=mode)

    def protect(self, context: KeyContext, sender: str, values: np.ndarray, *,
                nonce: str) -> Protected:
        arr = np.asarray(values, dtype=np.float64)
        return Protected(self.name, "", arr.size, arr.copy(), {"summands": 1})

    def reveal(self, federation: Federation, context: KeyContext,
               protected: Protected) -> np.ndarray:
        return np.asarray(protected.data, dtype=np.float64)

    def to_wire(self, protected: Protected) -> Wire:
        return Wire(protected.data, self.protection, "", {"summands": protected.info["summands"]})

    def from_wire(self, context: KeyContext, party: str, wire: Wire) -> Protected:
        data = np.asarray(wire.payload, dtype=np.float64)
        return Protected(self.name, "", data.size, data, dict(wire.meta))

    def add(self, a: Protected, b: Protected) -> Protected:
        if a.length != b.length:
            raise ValidationError(
                f"Cannot add protected vectors of lengths {a.length} and {b.length}."
            )
        return Protected(self.name, "", a.length, a.data + b.data,
                         {"summands": a.info["summands"] + b.info["summands"]})

    def add_plain(self, a: Protected, values: np.ndarray) -> Protected:
        return Protected(self.name, "", a.length, a.data + np.asarray(values, dtype=float),
                         dict(a.info))

    def mul_plain(self, a: Protected, factor: float | np.ndarray) -> Protected:
        return Protected(self.name, "", a.length, a.data * np.asarray(factor, dtype=float),
                         dict(a.info))

    def sum(self, items: Sequence[Protected]) -> Protected:
        if not items:
            raise ValidationError("Cannot sum zero contributions.")
        lengths = {p.length for p in items}
        if len(lengths) != 1:
            raise ValidationError(
                f"Contributions to a sum must share one length. Got lengths {sorted(lengths)}."
            )
        return Protected(self.name, "", items[0].length, np.sum([p.data for p in items], axis=0),
                         {"summands": sum(p.info["summands"] for p in items)})
