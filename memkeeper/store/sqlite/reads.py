"""What each identity last read of each section, in the SQLite store (``reads``: one row per
reader, path and key — the rev it read and the last rev it was told of), and which of them
changed since: one join with ``sections`` over that reader's rows alone.

A mixin of ``Store`` (it shares the one connection and its transactions).
"""

from __future__ import annotations

from memkeeper.store.sqlite.core import SqliteCore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memkeeper.coordination import StaleRead


class ReadRows(SqliteCore):
    def reads_of(self, reader: str, path: str) -> dict[str, int]:
        """The rev ``reader`` last read of each section of ``path`` it read."""
        rows = self._db.execute(
            "SELECT key, rev FROM reads WHERE reader = ? AND path = ?", (reader, path)
        ).fetchall()
        return {key: rev for key, rev in rows}

    def record_reads(self, reader: str, path: str, revs: Mapping[str, int]) -> None:
        """``reader`` read these sections of ``path`` at these revs (nothing to tell it of)."""
        self._db.executemany(
            "INSERT INTO reads (reader, path, key, rev, told) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (reader, path, key) DO UPDATE SET rev = max(rev, excluded.rev), "
            "told = max(told, excluded.told)",
            [(reader, path, key, rev, rev) for key, rev in revs.items()],
        )

    def stale_reads(self, reader: str) -> list[StaleRead]:
        """The sections ``reader`` read that changed past the last rev it was told of."""
        rows = self._db.execute(
            "SELECT r.path, r.key, r.rev, r.told, s.rev, s.present FROM reads r "
            "JOIN sections s ON s.path = r.path AND s.key = r.key "
            "WHERE r.reader = ? AND s.rev > r.told ORDER BY r.path, s.ord, r.key",
            (reader,),
        ).fetchall()
        # The records' module is loaded by the first delivery that looks: a read has none.
        from memkeeper.coordination import StaleRead

        return [StaleRead(p, k, rev, told, now, bool(on)) for p, k, rev, told, now, on in rows]

    def tell_read(self, reader: str, path: str, key: str, rev: int) -> bool:
        """Remember that ``reader`` was told of ``rev``: False when it already was."""
        cursor = self._db.execute(
            "UPDATE reads SET told = ? WHERE reader = ? AND path = ? AND key = ? AND told < ?",
            (rev, reader, path, key, rev),
        )
        return bool(cursor.rowcount)
