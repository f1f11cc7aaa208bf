"""The few reconstructed records an audit keeps, and only when its scenario asks for them.

An ``[[attacks]]`` entry with ``show = N`` (1 to :data:`MAX_SHOW`) keeps, in each cell's
result, the first ``N`` rows the attack reconstructed for its first target next to the true
rows, so that the report can draw them. Without ``show`` nothing reconstructed is stored.
A row of pixels is placed on its image grid when the target holds a known subset of an
image's pixels (its shard's columns, out of a square number of features).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from fedsec.outcomes import Reconstruction
from fedsec.private_store import parse_truth_key, shard_key

MAX_SHOW = 16
"""The most rows a scenario may ask to keep per attack and threat model."""


def examples(reconstruction: Reconstruction, truth: Mapping[str, Any], n_features: int,
             n: int) -> dict[str, Any] | None:
    """The first ``n`` reconstructed and true rows of the first target that has rows (None:
    no target is a matrix of rows, nothing to show)."""
    for key in sorted(reconstruction.estimates):
        estimate = np.asarray(reconstruction.estimates[key])
        true = np.asarray(truth.get(key)) if key in truth else None
        if (estimate.ndim != 2 or true is None or true.ndim != 2
                or true.shape[1] != estimate.shape[1]
                or not np.issubdtype(estimate.dtype, np.number)):
            continue
        rows = min(n, len(estimate), len(true))
        return {"target": key, "estimate": estimate[:rows].astype(float).tolist(),
                "truth": true[:rows].astype(float).tolist(),
                "grid": _grid(key, truth, estimate.shape[1], n_features)}
    return None


def _grid(key: str, truth: Mapping[str, Any], width: int, n_features: int
          ) -> dict[str, Any] | None:
    """Where each value sits on a square image: ``{"side", "positions"}``, or None."""
    party = parse_truth_key(key).party
    columns = truth.get(shard_key(party, 0, "columns")) if party else None
    side = math.isqrt(n_features)
    if side * side != n_features or side < 2:
        return None
    if width == n_features:
        return {"side": side, "positions": list(range(n_features))}
    if columns is not None and len(np.asarray(columns)) == width:
        return {"side": side, "positions": np.asarray(columns, dtype=int).tolist()}
    return None
