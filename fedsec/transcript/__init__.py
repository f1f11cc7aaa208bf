"""The transcript: the append-only, integrity-chained record of one run.

Write with :class:`TranscriptWriter` (the network does this), read with
:func:`read_transcript`, check with :meth:`Transcript.verify`, analyse with
:func:`read_pandas` (payloads decoded by :func:`payload_of`) or ``pandas.read_feather``.
"""

from fedsec.transcript.check import STATUSES, FileVerdict, check_file
from fedsec.transcript.message import Message
from fedsec.transcript.reader import payload_of, read_pandas, read_transcript
from fedsec.transcript.save import write_transcript
from fedsec.transcript.transcript import IntegrityReport, Transcript
from fedsec.transcript.writer import TranscriptWriter

#: File name of the transcript inside a run directory.
FILE_NAME = "transcript.arrow"

__all__ = [
    "FILE_NAME",
    "STATUSES",
    "FileVerdict",
    "IntegrityReport",
    "Message",
    "Transcript",
    "TranscriptWriter",
    "check_file",
    "payload_of",
    "read_pandas",
    "read_transcript",
    "write_transcript",
]
