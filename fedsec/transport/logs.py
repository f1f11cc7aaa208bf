"""The party processes' own logs, checked against the run's transcript.

Under ``--transport tcp`` each party's process writes ``parties/NAME.log``: one JSON line
per frame it sent, received or kept (``seq``, ``event``, ``peer``, ``tag``, ``digest``,
``bytes``). The transcript is the merge of these logs: every message appears as ``sent`` in
its sender's log and ``received`` in its receiver's (``kept`` once for a party's own record),
with the digest of the frame that carried it. :func:`check_party_logs` checks that, from the
coordinator's record of the run or, after the fact, from the transcript file itself
(:func:`transcript_entries`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote

from fedsec.errors import TransportError
from fedsec.transport.frame import digest, message_frame

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.transcript import Transcript

#: The folder of a run's output directory that holds the party logs.
LOG_FOLDER = "parties"


class Entry(NamedTuple):
    """One message as the logs must show it: who sent it to whom, and its frame's digest."""

    seq: int
    sender: str
    receiver: str
    tag: str
    digest: str


def log_file(log_dir: str | os.PathLike[str], party: str) -> Path:
    """Where ``party``'s process writes its log (the name quoted: names may hold ``/``)."""
    return Path(log_dir) / f"{quote(party, safe='')}.log"


def transcript_entries(transcript: Transcript) -> Iterator[Entry]:
    """The entries of a recorded transcript: each message's frame rebuilt and digested."""
    for m in transcript.messages:
        yield Entry(m.seq, m.sender, m.receiver, m.tag, digest(message_frame(m)))


def check_party_logs(entries: Iterable[Entry], log_dir: str | os.PathLike[str],
                     parties: Iterable[str]) -> int:
    """Check every party's log against ``entries``; the number of log lines checked.

    Raises
    ------
    TransportError
        At the first line that differs (naming the party and the message), or when a log
        is missing, unreadable, or shorter or longer than the run.
    """
    expected: dict[str, list[tuple[int, str, str, str, str]]] = {p: [] for p in parties}
    for e in entries:
        if e.sender == e.receiver:
            expected[e.sender].append((e.seq, "kept", e.sender, e.tag, e.digest))
            continue
        expected[e.sender].append((e.seq, "sent", e.receiver, e.tag, e.digest))
        expected[e.receiver].append((e.seq, "received", e.sender, e.tag, e.digest))
    checked = 0
    for party, lines in expected.items():
        logged = _read(log_file(log_dir, party), party)
        for want, got in zip(lines, logged, strict=False):  # lengths checked below
            if want != got:
                raise TransportError(
                    f"Party {party!r}'s log disagrees with the transcript at message {want[0]}: "
                    f"it logged {_show(got)}, the transcript holds {_show(want)}.")
        if len(logged) != len(lines):
            raise TransportError(
                f"Party {party!r}'s log holds {len(logged)} entries; the transcript gives it "
                f"{len(lines)}.")
        checked += len(lines)
    return checked


def _read(path: Path, party: str) -> list[tuple[int, str, str, str, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise TransportError(f"Party {party!r}'s log {str(path)!r} cannot be read: "
                             f"{error.strerror or error}.") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            row = json.loads(line)
            out.append((int(row["seq"]), str(row["event"]), str(row["peer"]), str(row["tag"]),
                        str(row["digest"])))
        except (ValueError, KeyError, TypeError):
            raise TransportError(f"Party {party!r}'s log {str(path)!r}: line {number} is not "
                                 "a log entry.") from None
    return out


def _show(entry: tuple[int, str, str, str, str]) -> str:
    seq, event, peer, tag, value = entry
    return f"message {seq} {event} ({tag}, peer {peer}, digest {value[:16]})"
