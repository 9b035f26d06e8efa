"""The stamps table of the SQLite store: this checkout's files' stat stamps
(``memkeeper.stamps``), each with the hash of the bytes read at it and the key of the
``check`` that found them clean. A cache: a row lost (a power cut, a store rebuilt) only
makes the next look read the file again. Not a mixin of ``Store``: only the commands that
look at every file load it (``Store.stamp_table``, on the store's connection).
"""

from __future__ import annotations

from memkeeper.stamps import Stamp, Stamped
from memkeeper.store.sqlite.core import SqliteCore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_COLUMNS = "path, size, mtime_ns, ctime_ns, inode, device, hash, taken_ns, clean"


class StampTable(SqliteCore):
    def stamps(self) -> dict[str, Stamped]:
        """Every file's last stamp, by path."""
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM stamps").fetchall()
        new = tuple.__new__  # (the records' own ``__new__``, a Python frame each, skipped)
        return {row[0]: new(Stamped, (row[0], new(Stamp, row[1:6]), *row[6:])) for row in rows}

    def put_stamps(self, rows: Sequence[Stamped]) -> None:
        """Replace these files' stamps: in the open transaction, else in one of their own
        that does not wait for the disk (a stamp lost to a power cut is read again)."""
        if not self._db.in_transaction:
            with self.writing(durable=False):
                self.put_stamps(rows)
            return
        self._db.executemany(
            f"INSERT OR REPLACE INTO stamps ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(r.path, *r.stamp, r.hash, r.taken_ns, r.clean) for r in rows],
        )
