"""Communication and computation cost, derived from recorded messages.

Bytes are payload bytes on the wire (framing is not counted). Key material
recorded by fingerprint counts its real size. A party's local computation time
is what :meth:`fedsec.network.Network.compute` measured.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from fedsec.transcript import Message


def summarize(
    messages: Iterable[Message],
    compute_seconds: Mapping[tuple[str, int, str], float] | None = None,
    wall_seconds: float | None = None,
    crypto_seconds: Mapping[tuple[str, int, str], float] | None = None,
) -> dict[str, Any]:
    """Totals and breakdowns by party, round, phase and tag.

    Returns
    -------
    dict
        ``{"total": {...}, "by_party": {...}, "by_round": {...},
        "by_phase": {...}, "by_tag": {...}}``; every leaf has ``messages``
        and ``bytes``; parties have sent and received figures; parties,
        rounds and phases have ``compute_seconds`` when it was measured;
        parties and tags have ``crypto_seconds`` (protection work) when there was any.

    Examples
    --------
    >>> summarize([])["total"]
    {'messages': 0, 'bytes': 0}
    """
    total: dict[str, float] = {"messages": 0, "bytes": 0}
    by_party: dict[str, dict[str, float]] = defaultdict(
        lambda: {"messages_sent": 0, "bytes_sent": 0, "messages_received": 0, "bytes_received": 0}
    )
    by_round: dict[int, dict[str, float]] = defaultdict(lambda: {"messages": 0, "bytes": 0})
    by_phase: dict[str, dict[str, float]] = defaultdict(lambda: {"messages": 0, "bytes": 0})
    by_tag: dict[str, dict[str, float]] = defaultdict(lambda: {"messages": 0, "bytes": 0})
    crypto_total = 0.0
    for m in messages:
        if m.crypto_seconds:
            crypto_total += m.crypto_seconds
            for entry in (by_party[m.sender], by_tag[m.tag]):
                entry["crypto_seconds"] = entry.get("crypto_seconds", 0.0) + m.crypto_seconds
        if m.sender == m.receiver:  # a party's own record (e.g. key generation) is not traffic
            continue
        total["messages"] += 1
        total["bytes"] += m.size
        sent, received = by_party[m.sender], by_party[m.receiver]
        sent["messages_sent"] += 1
        sent["bytes_sent"] += m.size
        received["messages_received"] += 1
        received["bytes_received"] += m.size
        for entry in (by_round[m.round], by_phase[m.phase], by_tag[m.tag]):
            entry["messages"] += 1
            entry["bytes"] += m.size
    for (party, _round, _phase), seconds in (crypto_seconds or {}).items():
        crypto_total += seconds
        by_party[party]["crypto_seconds"] = by_party[party].get("crypto_seconds", 0.0) + seconds
    if crypto_total:
        total["crypto_seconds"] = crypto_total
    if compute_seconds:
        for (party, round_, phase), seconds in compute_seconds.items():
            for entry in (by_party[party], by_round[round_], by_phase[phase]):
                entry["compute_seconds"] = entry.get("compute_seconds", 0.0) + seconds
    out: dict[str, Any] = {
        "total": total,
        "by_party": {k: dict(v) for k, v in sorted(by_party.items())},
        "by_round": {str(k): v for k, v in sorted(by_round.items())},
        "by_phase": dict(sorted(by_phase.items())),
        "by_tag": dict(sorted(by_tag.items())),
    }
    if wall_seconds is not None:
        out["total"]["wall_seconds"] = wall_seconds
    return out


def human_bytes(n: float) -> str:
    """A byte count in B, KiB, MiB or GiB.

    Examples
    --------
    >>> human_bytes(1536), human_bytes(400), human_bytes(3 * 1024**3)
    ('1.5 KiB', '400 B', '3.0 GiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover
