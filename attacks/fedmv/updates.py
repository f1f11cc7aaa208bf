"""Which client updates of S-FedMV's FedAvg an adversary can read, and how.

Shared by the attacks on those updates (:mod:`.update_inversion`, :mod:`.update_labels`).

- the **server** (or anyone who can open the update messages) reads each client's
  ``[N_l, N_l w^l]`` itself;
- **all clients but one** (with two clients, each one) get the other client's weights from the
  next broadcast average, ``w^other = (N w_bar - sum_own N_l w^l) / N_other`` (two-client
  differencing). ``N_other`` is not sent in the clear; the coalition assumes the mean of its own
  counts unless told (``other_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.nn import Layout, layout_from_meta, unflatten
from fedsec.protocols.fedmv import tags
from fedsec.protocols.fedmv.setup import SERVER
from fedsec.view import View


@dataclass(frozen=True)
class Target:
    """One client's update as the adversary reads it: start, end, row count."""

    client: str
    round: int
    start: np.ndarray
    end: np.ndarray
    rows: int
    how: str


def broadcast_meta(view: View) -> dict[str, Any]:
    """The metadata of the first global weights ``view`` observed: the extractors, the views'
    layout and the clients' local training, the same every round."""
    return dict(next(iter(view.select(tag=tags.EXTRACTOR_GLOBAL))).meta)


def no_update_reason(view: View, at_round: int) -> str:
    """Why an attack on the updates cannot run on ``view``: it reads no update of round
    ``at_round`` (:func:`read_targets` finds none)."""
    return (f"{view.threat} reads no client's update in round {at_round}: it opens no update "
            "and is not every client but one")


def read_targets(view: View, at_round: int, *, clients: int = 1,
                 other_rows: int = 0) -> list[Target]:
    """The updates of round ``at_round`` ``view`` reads (at most ``clients``), or differences out.

    Empty when it reads none: no broadcast of that round, no update it can open, and not every
    client but one.
    """
    broadcasts = {int(m.round): m for m in view.select(tag=tags.EXTRACTOR_GLOBAL)
                  if view.can_open(m)}
    if at_round not in broadcasts:
        return []
    start = np.asarray(view.open(broadcasts[at_round]), dtype=np.float64)
    updates = [m for m in view.select(tag=tags.EXTRACTOR_UPDATE, round=at_round)
               if view.can_open(m)]
    out = []
    for m in updates:
        if m.sender in view.knowledge:
            continue
        payload = np.asarray(view.open(m), dtype=np.float64)
        out.append(Target(client=m.sender, round=at_round, start=start,
                          end=payload[1:] / payload[0], rows=round_count(payload[0]),
                          how="read"))
    if out or at_round + 1 not in broadcasts:
        return out[:clients]
    members = [p for p in view.parties if p != SERVER]
    missing = [c for c in members if c not in view.knowledge]
    own = [np.asarray(view.open(m), dtype=np.float64) for m in updates
           if m.sender in view.knowledge]
    if len(missing) != 1 or not own or len(own) != len(members) - 1:
        return []
    counts = [float(v[0]) for v in own]
    other = float(other_rows) or float(np.mean(counts))
    average = np.asarray(view.open(broadcasts[at_round + 1]), dtype=np.float64)
    end = ((sum(counts) + other) * average - sum(v[1:] for v in own)) / other
    return [Target(client=missing[0], round=at_round, start=start, end=end,
                   rows=round_count(other), how="differenced")]


def round_count(value: float) -> int:
    """A row count read from a payload (masked or noisy values round to the nearest, at least 1).

    Examples
    --------
    >>> round_count(3.9999), round_count(-0.2)
    (4, 1)
    """
    return max(1, round(float(value)))


def view_spans(meta: dict[str, Any]) -> list[tuple[Layout, slice]]:
    """Each view's weight layout and its span in the concatenated vector the broadcast and
    updates carry (the layouts in the broadcast's metadata), in view order."""
    out, offset = [], 0
    for entry in meta[tags.LAYOUTS]:
        layout = layout_from_meta(entry)
        size = sum(int(np.prod(s)) for _, s in layout)
        out.append((layout, slice(offset, offset + size)))
        offset += size
    return out


def view_slices(meta: dict[str, Any], flat: np.ndarray) -> list[dict[str, np.ndarray]]:
    """Each view's extractor weights, by name, from the concatenated vector."""
    return [{k: np.asarray(v) for k, v in unflatten(flat[span], layout).items()}
            for layout, span in view_spans(meta)]
