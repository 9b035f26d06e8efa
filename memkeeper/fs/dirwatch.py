"""A blocking wait for a change in one directory: Linux's inotify through libc, so a waiter
sleeps in ``select()`` until the kernel says a file there changed — no loop, no polling
(watchfiles, which the daemon uses for its batches, wakes every ``step`` to look).

``open_watch`` answers ``None`` where inotify is not to be had (another system, no libc
symbol, the watch limit reached): the caller falls back to watchfiles.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

from memkeeper.fs.readable import readable

# <sys/inotify.h>
IN_MODIFY, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x2, 0x80, 0x100, 0x200
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
MASK = IN_MODIFY | IN_MOVED_TO | IN_CREATE | IN_DELETE


class DirWatch:
    """An inotify watch on one directory (not recursive); ``close`` it when done."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def wait(self, timeout: float) -> bool:
        """Sleep until something in the directory changes or ``timeout`` seconds pass; True
        when it changed (everything the kernel queued meanwhile is taken with it)."""
        if not readable(self.fd, timeout):
            return False
        with contextlib.suppress(BlockingIOError):
            while os.read(self.fd, 65536):
                pass
        return True

    def close(self) -> None:
        os.close(self.fd)


def open_watch(directory: str) -> DirWatch | None:
    """A watch on ``directory``, or ``None`` where inotify cannot give one."""
    try:
        # the process's own symbols: libc is loaded (``find_library`` would run ldconfig)
        libc = ctypes.CDLL(None, use_errno=True)
        init, add = libc.inotify_init1, libc.inotify_add_watch
    except (OSError, AttributeError):
        return None
    fd = init(IN_NONBLOCK | IN_CLOEXEC)
    if fd < 0:
        return None
    if add(fd, os.fsencode(directory), MASK) < 0:
        os.close(fd)
        return None
    return DirWatch(fd)
