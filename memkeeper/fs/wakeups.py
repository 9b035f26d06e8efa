"""Waking queued claims without polling: one FIFO per waiter under ``.memkeeper/wait/``.

A waiter makes ``wait/<id>.fifo``, opens its read end and blocks in ``select()`` until a byte
arrives or its timeout passes. It also holds a write end open itself, so the FIFO never reads
as hung up (end of file) when a notifier closes its end. Whoever changes the claim table
(a release, grant, abort or expiry) writes one byte into every waiter's FIFO after committing;
a FIFO nobody reads any more (``ENXIO``) or that is gone is skipped. A watch of the shared
store (another thread) wakes its waiter through the waiter's own write end (``Inbox.poke``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from typing import TYPE_CHECKING

from memkeeper.fs.readable import readable
from memkeeper.names import WAIT_DIR

if TYPE_CHECKING:
    from collections.abc import Iterable


def fifo_path(home: str, request_id: str) -> str:
    return os.path.join(home, WAIT_DIR, f"{request_id}.fifo")


class Inbox:
    """The FIFO one waiter blocks on; close it when the wait is over."""

    __slots__ = ("_lock", "_read", "_write", "path")

    def __init__(self, home: str, request_id: str) -> None:
        os.makedirs(os.path.join(home, WAIT_DIR), exist_ok=True)
        self.path = fifo_path(home, request_id)
        discard(home, request_id)  # a stale FIFO of a crashed process with a reused id
        os.mkfifo(self.path, 0o600)
        flags = os.O_NONBLOCK | os.O_CLOEXEC
        self._read = os.open(self.path, os.O_RDONLY | flags)
        self._write = os.open(self.path, os.O_WRONLY | flags)
        self._lock = threading.Lock()  # a poke from another thread never outlives a close

    def block(self, timeout: float) -> bool:
        """Sleep until a notification or ``timeout`` seconds; True when woken by a byte."""
        if not readable(self._read, timeout):
            return False
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 4096):
                pass
        return True

    def poke(self) -> None:
        """Wake the waiter from this process (another thread); nothing once it is closed."""
        with self._lock:
            if self._write >= 0:
                # Full: it has been poked already.
                with contextlib.suppress(BlockingIOError):
                    os.write(self._write, b"\0")

    def close(self) -> None:
        with self._lock:
            if self._read < 0:
                return
            os.close(self._read)
            os.close(self._write)
            self._read = self._write = -1
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


def notify(home: str, request_ids: Iterable[str]) -> None:
    """Write a byte to each waiter's FIFO; missing or unread ones are skipped. Called after a
    commit, so it never raises: a waiter it cannot poke finds out at its next re-check."""
    for request_id in request_ids:
        with contextlib.suppress(OSError):
            _poke(fifo_path(home, request_id))


def _poke(path: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENXIO, errno.ELOOP, errno.ENOTDIR, errno.EISDIR):
            return  # no such waiter, or nobody reads it any more
        raise
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            # Full: it has been poked already. A broken pipe: the waiter hung up between the
            # open and the write (it got its answer, or gave up).
            with contextlib.suppress(BlockingIOError, BrokenPipeError):
                os.write(fd, b"\0")
    finally:
        os.close(fd)


def discard(home: str, request_id: str) -> None:
    """Remove a waiter's FIFO left behind (by a crashed waiter)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(fifo_path(home, request_id))
