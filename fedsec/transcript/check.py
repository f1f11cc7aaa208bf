"""One verdict for any file given as a transcript, however damaged.

:func:`check_file` never raises for what is in the file: every file is ``intact``,
``aborted`` (intact, but the run raised), ``truncated`` (cut after message N), ``tampered``
(message N or the end record does not match the chain) or ``not-a-transcript``. Only a path
that names no file raises (:class:`~fedsec.errors.MissingInputError`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedsec.errors import MissingInputError, TranscriptError
from fedsec.transcript.message import Message
from fedsec.transcript.reader import messages_of, open_messages
from fedsec.transcript.signing import signature_problem
from fedsec.transcript.transcript import ChainCheck, IntegrityReport, Transcript

#: The run record written beside a run's transcript.
RESULT_FILE = "result.json"
if TYPE_CHECKING:  # pragma: no cover
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

STATUSES = ("intact", "aborted", "truncated", "tampered", "not-a-transcript")


@dataclass(frozen=True)
class FileVerdict:
    """What :func:`check_file` found.

    Attributes
    ----------
    status : str
        One of :data:`STATUSES`.
    report : IntegrityReport or None
        The chain's verdict (None for a file that is not a transcript).
    transcript : Transcript or None
        What could be read, when the messages were kept (None for a file that is not a
        transcript, or when ``keep_messages`` was off).
    problem : str
        Why the file is not a transcript (empty otherwise).
    header, footer : Mapping or None
        The run header and the end record as read.
    consumed : Any
        What ``consume`` returned for the messages read.
    """

    status: str
    report: IntegrityReport | None
    transcript: Transcript | None
    problem: str = ""
    header: Mapping[str, Any] | None = None
    footer: Mapping[str, Any] | None = None
    consumed: Any = None

    @property
    def ok(self) -> bool:
        return self.status == "intact"

    def summary(self) -> str:
        """One line for a terminal."""
        if self.report is None:
            return f"not a transcript: {self.problem}"
        return self.report.summary()


def check_file(path: str | os.PathLike[str], *, verify_key: Ed25519PublicKey | None = None,
               keep_messages: bool = True,
               consume: Callable[[Iterable[Message]], Any] | None = None) -> FileVerdict:
    """Read and verify the transcript at ``path``: a verdict for any file.

    The file is read and its chain checked batch by batch; with ``keep_messages=False`` no
    more than one batch is in memory at a time, whatever the message count. ``consume`` gets
    the messages read, in one pass, as they are checked (for example
    :func:`fedsec.cost.summarize`); its result is the verdict's ``consumed``. With
    ``verify_key``, an intact file must also be signed by that key over its end record
    (:mod:`fedsec.transcript.signing`); otherwise it is ``tampered``.

    Raises
    ------
    MissingInputError
        When ``path`` names no file.
    """
    try:
        stream = open_messages(path)
    except MissingInputError:
        raise
    except TranscriptError as error:
        return FileVerdict(status="not-a-transcript", report=None, transcript=None,
                           problem=str(error))
    with stream:
        chain = ChainCheck(stream.header, stream.version)
        kept: list[Message] | None = [] if keep_messages else None

        def checked() -> Iterator[Message]:
            intact = True
            for cols in stream.column_batches():
                intact = intact and chain.add_columns(cols)
                if kept is not None or consume is not None:
                    messages = messages_of(cols)
                    if kept is not None:
                        kept.extend(messages)
                    yield from messages

        flow = checked()
        consumed = None if consume is None else consume(flow)
        deque(flow, maxlen=0)  # to the end, whatever ``consume`` left
        report = chain.finish(stream.footer, stream.problems, stream.damaged_at,
                              n_read=stream.n_read)
        transcript = None if kept is None else Transcript(
            header=stream.header, messages=tuple(kept), footer=stream.footer,
            read_problems=tuple(stream.problems), format_version=stream.version,
            damaged_at=stream.damaged_at)
        footer = stream.footer
    if report.ok:
        report = _against_result(Path(path), footer, report)
    if report.ok and verify_key is not None:
        problem = signature_problem(footer, verify_key)
        if problem is not None:
            report = dataclasses.replace(report, ok=False, status="tampered", problems=(problem,))
    status = "intact" if report.ok else report.status
    return FileVerdict(status=status, report=report, transcript=transcript,
                       header=stream.header, footer=footer,
                       consumed=consumed)


def _against_result(path: Path, footer: Mapping[str, Any] | None,
                    report: IntegrityReport) -> IntegrityReport:
    """Compare the chain's end with what ``result.json`` beside the file recorded of it."""
    result = path.parent / RESULT_FILE
    if not result.is_file():
        return report
    try:
        recorded = json.loads(result.read_text(encoding="utf-8"))["transcript"]
        if recorded.get("file", path.name) != path.name:
            return report
        head, n = recorded["head"], recorded["messages"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        return report  # not a result of this transcript's run: nothing to compare
    footer = footer or {}
    if head == footer.get("head") and n == footer.get("n_messages"):
        return report
    return dataclasses.replace(report, ok=False, status="tampered", problems=(
        f"{RESULT_FILE} beside it records {n} messages ending in chain value {str(head)[:16]}…, "
        f"the file {footer.get('n_messages')} ending in {str(footer.get('head'))[:16]}…: one of "
        "them was replaced or edited",))
