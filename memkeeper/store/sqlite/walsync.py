"""Group commit: one ``fdatasync`` of SQLite's write-ahead log for every commit made before it.

Every connection commits with ``synchronous=NORMAL`` — the WAL frames written, not synced —
and a durable write then waits here until the log is synced up to its commit. Threads that
commit while a sync is in flight are covered by the next one, which the first of them makes
for all: writers in one process (the MCP server, the dashboard, an orchestrator) share syncs,
and a lone writer pays exactly the one sync ``synchronous=FULL`` would. The sync is of the
``-wal`` file by path, reopened when SQLite recreated it, so it covers frames written by any
connection of this process (and every other process's too: an fdatasync flushes the file).
"""

from __future__ import annotations

import _thread
import os


class WalSync:
    """The syncs of one ``-wal`` file, shared by this process's connections to its database."""

    def __init__(self, path: str) -> None:
        import threading  # here: a command that writes nothing durable never loads it

        self.path = path
        self._cond = threading.Condition(threading.Lock())
        self._committed = 0  # commits that asked for a sync …
        self._synced = 0  # … and how many of them a finished sync covers
        self._syncing = False
        self._fd = -1
        self._inode = -1

    def sync(self) -> None:
        """Return once a sync that started after this call's commit has finished (raising
        the ``OSError`` of that sync, if it failed)."""
        with self._cond:
            self._committed += 1
            ticket = self._committed
            while self._synced < ticket:
                if self._syncing:
                    self._cond.wait()
                    continue
                self._syncing, target = True, self._committed
                self._cond.release()
                try:
                    self._fdatasync()
                finally:
                    self._cond.acquire()
                    self._syncing = False
                    self._cond.notify_all()
                self._synced = target

    def _fdatasync(self) -> None:
        """Sync the log file, reopening it when the name now leads to another file."""
        try:
            inode = os.stat(self.path).st_ino
        except FileNotFoundError:
            return  # no log: every commit is in the database file, which SQLite synced
        if inode != self._inode:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            self._inode = os.fstat(self._fd).st_ino
        os.fdatasync(self._fd)


_SYNCS: dict[str, WalSync] = {}
_SYNCS_LOCK = _thread.allocate_lock()  # ``threading`` costs a read's start-up ~1 ms


def for_log(path: str) -> WalSync:
    """This process's ``WalSync`` of the log at ``path``."""
    with _SYNCS_LOCK:
        found = _SYNCS.get(path)
        if found is None:
            found = _SYNCS[path] = WalSync(path)
        return found
