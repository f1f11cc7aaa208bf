"""The plain backend: no protection, the baseline every audit compares against."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fedsec.errors import ValidationError
from fedsec.interfaces import MaskingBackend
from fedsec.registry import register
from fedsec.wire import Wire

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation


@register("backend", "plain")
class PlainBackend(MaskingBackend):
    """Values travel as they are; anyone on the link reads them."""

    summary = "No protection: values travel in the clear (the baseline)."
    protection = "plain"
    operations = frozenset({"add", "add_plain", "mul_plain", "sum"})
    exact = True

    def protect(self, federation: Federation, sender: str, values: np.ndarray, *,
                receiver: str) -> Wire:
        return Wire(np.asarray(values), self.protection)

    def aggregate(self, federation: Federation, receiver: str, received: Sequence[Wire]) -> Wire:
        if not received:
            raise ValidationError("Cannot aggregate zero contributions.")
        shapes = {np.shape(w.payload) for w in received}
        if len(shapes) != 1:
            raise ValidationError(
                f"Contributions to a sum must share one shape. Got shapes {sorted(shapes)}."
            )
        total = np.sum([np.asarray(w.payload) for w in received], axis=0)
        return Wire(total, self.protection)

    def reveal(self, federation: Federation, receiver: str, aggregate: Wire) -> np.ndarray:
        return np.asarray(aggregate.payload)
