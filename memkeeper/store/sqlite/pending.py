"""The pending table of the SQLite store: file replaces committed before they happen on disk.

The store is the write-ahead log of the files (docs/architecture.md "The write path"): a
write commits its rows, its event and a ``pending`` row in one synced transaction, then
replaces the file without fsyncs of its own. The row says how to tell afterwards whether
the replace happened; rows go once the file is known to be durable (a checkpoint fsyncs it)
or superseded. A mixin of ``Store``; call the writing methods inside ``Store.writing()``.
"""

from __future__ import annotations

from memkeeper.records import PendingWrite
from memkeeper.store.sqlite.core import SqliteCore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_COLUMNS = "seq, path, old_inode, old_mtime_ns, old_size, old_hash, new_inode, new_hash, temp, at"


class PendingRows(SqliteCore):
    def put_pending(self, write: PendingWrite) -> None:
        """Record a replace about to happen (``write.seq`` is ignored: the store numbers it)."""
        self._db.execute(
            f"INSERT INTO pending ({_COLUMNS}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            tuple(write)[1:],
        )

    def pending(self, path: str) -> list[PendingWrite]:
        """The replaces of ``path`` not yet known to be durable, oldest first."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM pending WHERE path = ? ORDER BY seq", (path,)
        ).fetchall()
        return [_pending(row) for row in rows]

    def pending_count(self, path: str) -> tuple[int, float | None]:
        """How many replaces of ``path`` are pending, and when the oldest was committed."""
        count, oldest = self._db.execute(
            "SELECT COUNT(*), MIN(at) FROM pending WHERE path = ?", (path,)
        ).fetchone()
        return int(count), oldest

    def pending_paths(self, before: float) -> list[str]:
        """The paths with a pending replace committed before ``before``."""
        rows = self._db.execute(
            "SELECT DISTINCT path FROM pending WHERE at < ? ORDER BY path", (before,)
        )
        return [row[0] for row in rows]

    def drop_pending(self, path: str) -> None:
        self._db.execute("DELETE FROM pending WHERE path = ?", (path,))


def _pending(row: tuple[Any, ...]) -> PendingWrite:
    return PendingWrite(*row)
