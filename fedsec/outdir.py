"""One writer per output directory: ``fedsec run`` and ``fedsec audit`` hold a lock on the
directory they write, so two processes never interleave their files there.

The lock is an advisory ``flock`` on ``DIR/.fedsec.lock`` (released by the operating system
when the holder exits, even by ``kill -9``); the file names the holder, so a second process is
refused with a message saying who has it. The holder removes the file when it is done (a
process that locked a file already removed tries again), so a finished directory holds only
its results.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from fedsec.errors import FedsecError, ValidationError

LOCK_FILE = ".fedsec.lock"


class DirectoryBusyError(FedsecError):
    """Another process is writing the output directory."""


@contextlib.contextmanager
def hold(out: str | os.PathLike[str], what: str) -> Iterator[Path]:
    """Create ``out`` if needed and hold it for this process while the block runs.

    Raises
    ------
    ValidationError
        When ``out`` names a file or cannot be created or written.
    DirectoryBusyError
        When another process holds it.
    """
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ValidationError(f"{str(path)!r} is a file; name a folder for the output.")
    lock = path / LOCK_FILE
    fd = _acquire(path, lock)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "what": what,
                                 "command": " ".join(sys.argv)}).encode())
        yield path
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)  # releases the lock


def _acquire(path: Path, lock: Path) -> int:
    """An open descriptor of ``lock``, locked, that is still the file at that path."""
    while True:
        try:
            path.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise ValidationError(f"Cannot write to {str(path)!r} ({error.strerror}); choose "
                                  "another output directory.") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise DirectoryBusyError(
                f"{str(path)!r} is being written by {holder}; wait for it to finish or "
                "choose another output directory.") from None
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # its holder removed it as we opened it: lock the new one


def _holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        info = json.loads(os.read(fd, 4096).decode())
        return f"{info['what']} (process {info['pid']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another fedsec process"
