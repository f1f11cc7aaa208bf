"""Communication and computation cost, derived from recorded messages.

Bytes are payload bytes on the wire (framing is not counted). Key material
recorded by fingerprint counts its real size. A party's local computation time
is what :meth:`fedsec.network.Network.compute` measured.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
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
    tally = Tally()
    tally.add(messages)
    return tally.summary(compute_seconds, wall_seconds, crypto_seconds)


def _entry() -> dict[str, float]:
    return {"messages": 0, "bytes": 0}


def _party_entry() -> dict[str, float]:
    return {"messages_sent": 0, "bytes_sent": 0, "messages_received": 0, "bytes_received": 0}


class Tally:
    """The traffic of messages added so far, kept as totals (no message is kept): what a run
    streaming its transcript to disk counts as it writes, instead of reading it back."""

    def __init__(self) -> None:
        self.total: dict[str, float] = _entry()
        self.by_party: dict[str, dict[str, float]] = defaultdict(_party_entry)
        self.by_round: dict[int, dict[str, float]] = defaultdict(_entry)
        self.by_phase: dict[str, dict[str, float]] = defaultdict(_entry)
        self.by_tag: dict[str, dict[str, float]] = defaultdict(_entry)
        self.crypto_total = 0.0

    def add(self, messages: Iterable[Message]) -> None:
        """Count ``messages``."""
        total, by_party = self.total, self.by_party
        for m in messages:
            if m.crypto_seconds:
                self.crypto_total += m.crypto_seconds
                for entry in (by_party[m.sender], self.by_tag[m.tag]):
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
            for entry in (self.by_round[m.round], self.by_phase[m.phase], self.by_tag[m.tag]):
                entry["messages"] += 1
                entry["bytes"] += m.size

    def summary(
        self, compute_seconds: Mapping[tuple[str, int, str], float] | None = None,
        wall_seconds: float | None = None,
        crypto_seconds: Mapping[tuple[str, int, str], float] | None = None,
    ) -> dict[str, Any]:
        """The summary :func:`summarize` returns, for the messages added so far."""
        total = dict(self.total)  # copies: the tally may go on counting
        by_party = defaultdict(_party_entry, {k: dict(v) for k, v in self.by_party.items()})
        by_round = defaultdict(_entry, {k: dict(v) for k, v in self.by_round.items()})
        by_phase = defaultdict(_entry, {k: dict(v) for k, v in self.by_phase.items()})
        crypto_total = self.crypto_total
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
            "by_party": dict(sorted(by_party.items())),
            "by_round": {str(k): v for k, v in sorted(by_round.items())},
            "by_phase": dict(sorted(by_phase.items())),
            "by_tag": {k: dict(v) for k, v in sorted(self.by_tag.items())},
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
