"""One writer per output directory: ``fedsec run`` and ``fedsec audit`` hold a lock on the
directory they write, so two processes never interleave their files there.

The lock is an advisory ``flock`` on ``DIR/.fedsec.lock`` (released by the operating system
when the holder exits, even by ``kill -9``); the file names the holder, so a second process is
refused with a message saying who has it. The holder removes the file when it is done (a
process that locked a file already removed tries again), so a finished directory holds only
its results.

The lock file is created with ``O_EXCL`` and opened with ``O_NOFOLLOW``: a symbolic link, a
hard link or anything but a regular file planted at ``DIR/.fedsec.lock`` is refused, never
written through (a link to another file would otherwise be truncated and overwritten).

A process forked while the lock is held (an audit's ``--jobs`` workers) closes its copy of the
descriptor at once, so the lock never outlives the process that took it. A lock whose recorded
holder is gone, on this machine and in this process namespace, is stale (descendants of a
holder from an older fedsec still hold its descriptor): it is taken over.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fedsec.errors import FedsecError, ValidationError

LOCK_FILE = ".fedsec.lock"

#: the lock descriptors this process holds; a forked child closes its copies
_HELD: set[int] = set()


def _close_held_in_child() -> None:
    for fd in _HELD:
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_held_in_child)


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
    _HELD.add(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "what": what,
                                 "command": " ".join(sys.argv), **_where()}).encode())
        yield path
    finally:
        lock.unlink(missing_ok=True)
        _HELD.discard(fd)
        os.close(fd)  # releases the lock


def _acquire(path: Path, lock: Path) -> int:
    """An open descriptor of ``lock``, locked, that is still the file at that path."""
    while True:
        try:
            path.mkdir(parents=True, exist_ok=True)
            fd = _open_lock(lock)
        except OSError as error:
            raise ValidationError(f"Cannot write to {str(path)!r} ({error.strerror}); choose "
                                  "another output directory.") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            info = _holder_info(fd)
            if _is_stale(info) and _same_file(lock, fd):
                lock.unlink(missing_ok=True)  # its holder is gone: take the folder over
                os.close(fd)
                continue
            os.close(fd)
            raise DirectoryBusyError(
                f"{str(path)!r} is being written by {_describe(info)}; wait for it to finish "
                "or choose another output directory.") from None
        if _same_file(lock, fd):
            return fd
        os.close(fd)  # its holder removed it as we opened it: lock the new one


_FLAGS = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_lock(lock: Path) -> int:
    """A descriptor of the lock file: created afresh (``O_EXCL``), or the existing one opened
    without following a link (``O_NOFOLLOW``; without blocking on a FIFO) and refused unless
    it is a regular file with no other name."""
    for _ in range(100):
        try:
            return os.open(lock, _FLAGS | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        try:
            fd = os.open(lock, _FLAGS | getattr(os, "O_NONBLOCK", 0))
            break
        except FileNotFoundError:
            continue  # removed by its holder between the two calls: create it
        except OSError:
            if os.path.islink(lock):
                raise ValidationError(f"{str(lock)!r} is a symbolic link, not fedsec's lock "
                                      "file; remove it (it was not followed).") from None
            raise
    else:
        raise ValidationError(f"{str(lock)!r} keeps appearing and vanishing; another "
                              "process is at work in this folder.")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        what = "a hard link to another file" if stat.S_ISREG(info.st_mode) else "not a file"
        raise ValidationError(f"{str(lock)!r} is {what}, not fedsec's lock file; remove it "
                              "(it was not written).")
    return fd


def _same_file(lock: Path, fd: int) -> bool:
    try:
        return os.stat(lock).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _where() -> dict[str, str]:
    """This machine and process namespace, which give a recorded pid its meaning."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    return {"host": socket.gethostname(), "pid_namespace": namespace}


def _holder_info(fd: int) -> dict[str, Any]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        info = json.loads(os.read(fd, 4096).decode())
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _is_stale(info: dict[str, Any]) -> bool:
    """Whether the recorded holder is a process of this machine and namespace that is gone."""
    pid = info.get("pid")
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return False  # unreadable: never taken over
    if "host" in info and {k: info.get(k) for k in ("host", "pid_namespace")} != _where():
        return False  # another machine or container: its pid means nothing here
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def _describe(info: dict[str, Any]) -> str:
    if "what" in info and "pid" in info:
        return f"{info['what']} (process {info['pid']})"
    return "another fedsec process"
