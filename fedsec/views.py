"""Views: what one adversary observed, plus what it already knew.

:func:`build_view` cuts a transcript down to the messages one threat model
observes and the private holdings of its own members; the :class:`View` it
returns (:mod:`fedsec.view`) is all an attack receives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fedsec.errors import FedsecError
from fedsec.private_store import party_entries
from fedsec.registry import protocols
from fedsec.threat import ThreatModel
from fedsec.transcript import Message, Transcript
from fedsec.transcript.columnar import ColumnMessages
from fedsec.transcript.log import MessageLog
from fedsec.view import READABLE_WITHOUT_KEY, View

__all__ = ["READABLE_WITHOUT_KEY", "View", "build_view", "renamed_tags"]


def renamed_tags(header: Mapping[str, Any]) -> Mapping[str, str]:
    """Old tag → today's, for a transcript written before its family's tags were renamed.

    The protocol named in the header declares its renames (``renamed_tags``, the
    family's documented alias table ``tags.RENAMED``); a transcript of today
    carries none of the old names, so nothing changes for it. A protocol that is
    no longer installed has no table: its tags are read as they are.
    """
    name = header.get("protocol", {}).get("name")
    if not isinstance(name, str):
        return {}
    try:
        return dict(protocols.get(name).renamed_tags)
    except FedsecError:
        return {}


def build_view(
    transcript: Transcript, threat: ThreatModel | str,
    private: Mapping[str, np.ndarray | bytes] | None = None, *, run_seed: int | None = None,
) -> View:
    """The View of ``threat`` on ``transcript``.

    Parameters
    ----------
    transcript : Transcript
        A finished run.
    threat : ThreatModel or str
        The adversary (see :mod:`fedsec.threat` for the string forms).
    private : Mapping, optional
        The run's private store (``party/NAME/...`` entries); only the
        coalition members' entries enter the view. Without it the coalition
        knows nothing but what it observed.
    run_seed : int, optional
        The run's public seed (its scenario's, or ``result.json``'s ``seed``), which attacks
        derive their own random streams from; None when it is not known.

    Messages keep their content; tags a transcript of an older fedsec wrote
    under a name since renamed are shown under today's name
    (:func:`renamed_tags`). A transcript read from a file keeps its record batches: the
    view selects their rows (:meth:`ColumnMessages.observed`), building no message until
    one is read.
    """
    if isinstance(threat, str):
        threat = ThreatModel.parse(threat)
    threat.check_parties(transcript.parties)
    renamed = renamed_tags(transcript.header)
    columns = _columns(transcript.messages)
    observed: Sequence[Message]
    if columns is not None:
        observed = columns.observed(threat.observes, renamed)
    else:
        observed = tuple(
            m._replace(tag=renamed[m.tag]) if m.tag in renamed else m
            for m in transcript.messages if threat.observes(m.sender, m.receiver)
        )
    knowledge = {
        member: party_entries(private, member) if private is not None else {}
        for member in threat.members
    }
    return View(threat=threat, header=transcript.header, messages=observed, knowledge=knowledge,
                run_seed=run_seed)


def _columns(messages: Sequence[Message]) -> ColumnMessages | None:
    """``messages`` as record batches, when they come from a file (a run streamed to one
    reads it back so); None for messages held otherwise."""
    if isinstance(messages, ColumnMessages):
        return messages
    if isinstance(messages, MessageLog):
        return messages.columns()
    return None
