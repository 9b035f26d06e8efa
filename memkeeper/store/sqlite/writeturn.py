"""Writers of the local store take turns at its write lock in the order they ask for it.

SQLite's own wait for its write lock (the busy handler) sleeps and tries again, 1, 2, 5, 10 …
100 ms apart. Under many writers at once the lock lies free while its waiters sleep, and the
one that has waited longest sleeps longest while newcomers get in: with 32 agents queued for
one path, a ``BEGIN IMMEDIATE`` waited 13 ms on average (p90 3 ms: a tail of long sleeps),
and claim + release ran at 47 % of its rate with 2 agents (issue 26 asks for 50 %).

So each writer first takes its turn: an exclusive ``flock`` on ``locks/write.lock`` in the
home, which the kernel hands to a waiting writer the moment its holder lets go — no sleep, no
lost time. SQLite's lock stays the one that guards the data (a writer that takes no turn, the
``sqlite3`` shell, is still kept out by it); the turn only orders memkeeper's writers. The
turn is let go at the commit, before the log's sync, so group commit still gathers writers.

Uncontended, a turn costs one non-blocking ``flock`` (microseconds). Contended, the wait is
the kernel's, in a helper thread (``fs.locks.wait_in_kernel``, as every file lock's), so that
it stays bounded as SQLite's wait was (a holder
stopped with the turn, by Ctrl-Z or a debugger, makes the others give up with
``store_busy`` naming it, never hang). Where the lock file cannot be made (a home read-only
to this user), writers go without turns, as before.
"""

from __future__ import annotations

import fcntl
import os

_NONE = -2  # no lock file to be had: no turns


class WriteTurn:
    """The turns of one store connection (one ``open`` of the lock file: two connections of
    one process wait for each other like two processes)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = -1  # opened at the first write (a process that only reads never does)

    def take(self, timeout: float) -> bool:
        """Hold the turn; False when others held it for all of ``timeout`` seconds."""
        if self._fd == -1:
            self._fd = _open(self.path)
        if self._fd == _NONE:
            return True
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        from memkeeper.fs.locks import wait_in_kernel  # only when another writer holds it

        fd = wait_in_kernel(self.path, timeout)
        if fd is None:
            return False
        os.close(self._fd)  # (it held nothing: its try failed) the one holding the turn
        self._fd = fd
        return True

    def give(self) -> None:
        """Let the next writer in."""
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = _NONE


def _open(path: str) -> int:
    """The lock file, opened (made, with its directory, if missing); ``_NONE`` when it
    cannot be."""
    for _ in range(2):
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:  # a home older than its locks/ directory
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
            except OSError:
                return _NONE
        except OSError:
            return _NONE
    return _NONE
