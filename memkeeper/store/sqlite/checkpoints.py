"""The event chain's checkpoints in the SQLite store (table ``checkpoints``: one row per kind,
the record as JSON), and the compaction of the log's oldest events.

A mixin of ``Store`` (it shares the one connection and its transactions). Call the writing
methods inside ``Store.writing()``.
"""

from __future__ import annotations

from memkeeper.store.sqlite.core import SqliteCore

TYPE_CHECKING = False  # start-up idiom: every store opens with this mixin, few read checkpoints
if TYPE_CHECKING:
    from memkeeper.checkpoints import Checkpoint


class CheckpointRows(SqliteCore):
    def chain_checkpoint(self, kind: str) -> Checkpoint | None:
        """The checkpoint of ``kind`` (None: none written); ``checkpoints.Unreadable`` for a
        row that is not one."""
        sql = "SELECT record FROM checkpoints WHERE kind = ?"
        row = self._db.execute(sql, (kind,)).fetchone()
        if row is None:
            return None
        from memkeeper.checkpoints import decode

        return decode(row[0])

    def put_chain_checkpoint(self, cp: Checkpoint) -> None:
        """Keep ``cp`` as the checkpoint of its kind, over the one before."""
        from memkeeper.checkpoints import encode

        self._db.execute(
            "INSERT OR REPLACE INTO checkpoints (kind, record) VALUES (?, ?)", (cp.kind, encode(cp))
        )

    def compact_events(self, through: int) -> int:
        """Remove the events with ids up to ``through`` (the indexes go with them); how many
        were removed. The newest event is always kept: the next append chains after it."""
        cursor = self._db.execute(
            "DELETE FROM events WHERE id <= ? AND id < (SELECT MAX(id) FROM events)", (through,)
        )
        return cursor.rowcount
