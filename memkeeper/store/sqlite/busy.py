"""The SQLite store's write lock held too long by another process: ``store_busy``, naming it.

Every write of the local store is one ``BEGIN IMMEDIATE`` transaction, which takes SQLite's
write lock (in WAL mode: a POSIX lock on one byte of the ``-shm`` file) and holds it until
its commit — milliseconds. A writer stopped in between (Ctrl-Z, a debugger, SIGSTOP, a
machine swapping) holds it as long as it is stopped, and SQLite's busy timeout is all the
others would wait before a bare "database is locked". After its busy timeout (the core's
``BUSY_TIMEOUT_S``) they give up with ``store_busy`` instead, naming the holder as the
kernel lists it, and what to do. Imported only then.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

    from memkeeper.errors import EnvironmentFailure

SQLITE_BUSY = 5
# SQLite's WAL write lock: the first of the lock bytes of the -shm file (WALINDEX_LOCK_OFFSET).
WAL_WRITE_LOCK_BYTE = 120


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" (SQLITE_BUSY, any extended code)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF == SQLITE_BUSY


def busy_error(db: str, waited: float) -> EnvironmentFailure:
    """The answer to a write that waited ``waited`` seconds for the store ``db``'s write
    lock: nothing was changed (the transaction never began)."""
    from memkeeper.fs import locks

    pid = locks.holder(db + "-shm", WAL_WRITE_LOCK_BYTE)
    return locks.held_too_long_by(pid, db, "the state store's write lock", waited)
