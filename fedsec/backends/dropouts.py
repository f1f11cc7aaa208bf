"""Which senders of a dropout-tolerant sum drop, and the thresholds that let it open anyway.

A sum of :mod:`fedsec.backends.dropout_round` opens only if, for every sender, at least
``threshold`` holders of its key shares survive: the survivors' self-mask seeds and the
dropped senders' mask keys are rebuilt from ``threshold`` shares each. The threshold must
also exceed half the holders (Bonawitz et al., CCS 2017): else an aggregator that
tells two disjoint groups of holders different stories about one sender (dropped to one,
alive to the other) collects both of its secrets and reads its input.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from fedsec.errors import ValidationError
from fedsec.seeding import generator
from fedsec.validation import param_error

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation


def threshold_range(n_holders: int) -> tuple[int, int]:
    """The thresholds a sum with ``n_holders`` holders per sender accepts: more than half of
    them (else an aggregator that lies about who dropped gets both secrets of one sender from
    two disjoint groups), at most all of them.

    Examples
    --------
    >>> threshold_range(5), threshold_range(10)
    ((3, 5), (6, 10))
    """
    return n_holders // 2 + 1, n_holders


def check_threshold(threshold: int, neighbours: Mapping[str, Sequence[str]],
                    owner: str) -> None:
    """Refuse a threshold outside :func:`threshold_range` for a sum on ``neighbours``."""
    n_holders = 1 + min(len(near) for near in neighbours.values())
    low, high = threshold_range(n_holders)
    if not low <= threshold <= high:
        raise param_error(
            owner, "threshold",
            f"from {low} to {high} in this sum: above half of the {n_holders} holders of each "
            f"sender's key shares (itself and its {n_holders - 1} neighbours), and at most all "
            "of them", threshold)


def choose(federation: Federation, senders: Sequence[str], label: str, *, dropout: float,
           dropped: str) -> frozenset[str]:
    """The senders of the sum ``label`` that drop: those ``dropped`` names (comma-separated),
    else :func:`draw` of them from the run's secret stream."""
    if dropped:
        named = frozenset(n.strip() for n in dropped.split(","))
        unknown = sorted(named - set(senders))
        if unknown:
            raise ValidationError(
                f"The 'dropped' parameter of backend 'noise' names {unknown}, which send "
                f"nothing to this sum; its senders are {sorted(senders)}.")
        return named
    return draw(senders, dropout, generator(federation.secret_seed, f"noise:dropout:{label}"))


def draw(senders: Sequence[str], fraction: float, rng: np.random.Generator) -> frozenset[str]:
    """``round(fraction * K)`` of the ``K`` senders, drawn without replacement.

    Examples
    --------
    >>> sorted(draw(["a", "b", "c", "d"], 0.5, np.random.default_rng(0)))
    ['c', 'd']
    """
    count = math.floor(fraction * len(senders) + 0.5)
    chosen = rng.choice(len(senders), size=count, replace=False)
    ordered = sorted(senders)
    return frozenset(ordered[int(i)] for i in chosen)


def check_recoverable(holders: Mapping[str, Sequence[str]], dropped: Iterable[str],
                      threshold: int) -> None:
    """Refuse a set of dropouts that leaves some sender's secrets with fewer than ``threshold``
    surviving holders (the aggregator could then not unmask the sum)."""
    gone = set(dropped)
    worst = min(holders, key=lambda u: sum(v not in gone for v in holders[u]))
    alive = sum(v not in gone for v in holders[worst])
    if alive < threshold:
        raise ValidationError(
            f"The dropout-tolerant sum cannot be unmasked: {len(gone)} of {len(holders)} senders "
            f"drop, leaving {alive} of the {len(holders[worst])} holders of {worst}'s key shares, "
            f"fewer than threshold={threshold}. Lower the backend's 'dropout' (or name fewer "
            "'dropped' senders), or lower 'threshold' (it must stay above half the holders).")
