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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from fedsec.cost import Tally
from fedsec.errors import MissingInputError, TranscriptError
from fedsec.transcript.batch_fields import Columns, messages_of
from fedsec.transcript.chain_check import BatchChainCheck, IntegrityReport, chain_check
from fedsec.transcript.columnar import ColumnMessages
from fedsec.transcript.message import Message
from fedsec.transcript.reader import open_messages
from fedsec.transcript.signing import signature_problem
from fedsec.transcript.traffic import count_batch
from fedsec.transcript.transcript import Transcript

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
    traffic : Mapping or None
        With ``traffic=True``: the cost summary of the messages read
        (:func:`fedsec.cost.summarize`'s form), counted from the batches' columns.
    """

    status: str
    report: IntegrityReport | None
    transcript: Transcript | None
    problem: str = ""
    header: Mapping[str, Any] | None = None
    footer: Mapping[str, Any] | None = None
    consumed: Any = None
    traffic: Mapping[str, Any] | None = None

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
               consume: Callable[[Iterable[Message]], Any] | None = None,
               traffic: bool = False) -> FileVerdict:
    """Read and verify the transcript at ``path``: a verdict for any file.

    The file is read and its chain checked batch by batch; with ``keep_messages=False`` no
    more than one batch is in memory at a time, whatever the message count. ``consume`` gets
    the messages read, in one pass, as they are checked (for example
    :func:`fedsec.cost.summarize`); its result is the verdict's ``consumed``. With ``traffic``,
    the verdict's ``traffic`` sums the messages' cost from each batch's columns (without
    building a message: as fast as the chain's check in format 4). With
    ``verify_key``, an intact (or aborted) file must also be signed by that key over its format
    version, header and end record (:mod:`fedsec.transcript.signing`), and be of a format that
    seals its end record (3 or later); otherwise it is ``tampered``.

    Raises
    ------
    MissingInputError
        When ``path`` names no file.
    """
    try:
        stream = open_messages(path, mapped=keep_messages or consume is not None)
    except MissingInputError:
        raise
    except TranscriptError as error:
        return FileVerdict(status="not-a-transcript", report=None, transcript=None,
                           problem=str(error))
    with stream:
        chain = chain_check(stream.header, stream.version)
        batch_chain = isinstance(chain, BatchChainCheck)
        # kept as the file's batches, or, when ``consume`` needs messages, as those
        kept_batches: list[pa.RecordBatch] | None = (
            [] if keep_messages and consume is None else None)
        kept: list[Message] | None = [] if keep_messages and consume is not None else None
        # formats 1 to 3 chain each message from its decoded columns; format 4 a batch
        decode = consume is not None or not batch_chain

        tally = Tally() if traffic else None

        def batches() -> Iterator[Columns | None]:
            """Each batch's columns (when ``consume`` needs them), the chain checked on the
            way."""
            intact = True
            for batch, checkpoint, cols in stream.chain_batches(
                    decode, check=kept_batches is not None):
                if isinstance(chain, BatchChainCheck):
                    # a batch that records no chain value (a file re-saved without batch
                    # metadata) is checked by the end record's value alone
                    intact = intact and chain.add_batch(batch, checkpoint)
                else:
                    assert cols is not None  # decoded
                    intact = intact and chain.add_columns(cols)
                if tally is not None and intact:  # (past a break the verdict says enough)
                    count_batch(tally, batch)
                if kept_batches is not None:
                    kept_batches.append(batch)
                yield cols if consume is not None else None

        def checked() -> Iterator[Message]:
            for cols in batches():
                if cols is not None:
                    messages = messages_of(cols)
                    if kept is not None:
                        kept.extend(messages)
                    yield from messages

        flow = checked()
        consumed = None if consume is None else consume(flow)
        deque(flow, maxlen=0)  # to the end, whatever ``consume`` left
        report = chain.finish(stream.footer, stream.problems, stream.damaged_at,
                              n_read=stream.n_read)
        messages: Sequence[Message] | None = (
            tuple(kept) if kept is not None else None if kept_batches is None
            else ColumnMessages(kept_batches, stream.version, as_written=stream.as_written))
        transcript = None if messages is None else Transcript(
            header=stream.header, messages=messages, footer=stream.footer,
            read_problems=tuple(stream.problems), format_version=stream.version,
            damaged_at=stream.damaged_at, checkpoints=tuple(stream.checkpoints))
        footer = stream.footer
    if report.ok:
        report = _against_result(Path(path), footer, report)
    if verify_key is not None and (report.ok or report.status == "aborted"):
        # an aborted run's record is intact and signed too; anything else is refused already
        problem = signature_problem(footer, verify_key, header=stream.header,
                                    version=stream.version)
        if problem is not None:
            report = dataclasses.replace(report, ok=False, status="tampered", problems=(problem,))
    status = "intact" if report.ok else report.status
    return FileVerdict(status=status, report=report, transcript=transcript,
                       header=stream.header, footer=footer, consumed=consumed,
                       traffic=None if tally is None else tally.summary())


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
