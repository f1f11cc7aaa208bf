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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fedsec.errors import MissingInputError, TranscriptError
from fedsec.transcript.reader import read_transcript
from fedsec.transcript.signing import signature_problem
from fedsec.transcript.transcript import IntegrityReport, Transcript

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
        What could be read (None for a file that is not a transcript).
    problem : str
        Why the file is not a transcript (empty otherwise).
    """

    status: str
    report: IntegrityReport | None
    transcript: Transcript | None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "intact"

    def summary(self) -> str:
        """One line for a terminal."""
        if self.report is None:
            return f"not a transcript: {self.problem}"
        if self.report.ok:
            return self.report.summary()
        return f"{self.status}: " + "; ".join(self.report.problems)


def check_file(path: str | os.PathLike[str], *,
               verify_key: Ed25519PublicKey | None = None) -> FileVerdict:
    """Read and verify the transcript at ``path``: a verdict for any file.

    With ``verify_key``, an intact file must also be signed by that key over its end record
    (:mod:`fedsec.transcript.signing`); otherwise it is ``tampered``.

    Raises
    ------
    MissingInputError
        When ``path`` names no file.
    """
    try:
        transcript = read_transcript(path)
    except MissingInputError:
        raise
    except TranscriptError as error:
        return FileVerdict(status="not-a-transcript", report=None, transcript=None,
                           problem=str(error))
    report = transcript.verify()
    if report.ok:
        report = _against_result(Path(path), transcript, report)
    if report.ok and verify_key is not None:
        problem = signature_problem(transcript.footer, verify_key)
        if problem is not None:
            report = dataclasses.replace(report, ok=False, status="tampered", problems=(problem,))
    status = "intact" if report.ok else report.status
    return FileVerdict(status=status, report=report, transcript=transcript)


def _against_result(path: Path, transcript: Transcript,
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
    footer = transcript.footer or {}
    if head == footer.get("head") and n == footer.get("n_messages"):
        return report
    return dataclasses.replace(report, ok=False, status="tampered", problems=(
        f"{RESULT_FILE} beside it records {n} messages ending in chain value {str(head)[:16]}…, "
        f"the file {footer.get('n_messages')} ending in {str(footer.get('head'))[:16]}…: one of "
        "them was replaced or edited",))
