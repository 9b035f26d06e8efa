"""The meetings of the SQLite store: one row each, the record as JSON beside its state.

Not a mixin of ``Store``: ``Store.meetings``, loaded on first use (a read or a patch that
lands never uses it), on the store's connection and in its transactions. Call the writing
methods inside ``Store.writing()``: its ``BEGIN IMMEDIATE`` makes a read, a compare and a put
one step nobody else can come between.
"""

from __future__ import annotations

from memkeeper.store.sqlite.core import SqliteDomain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.meetings.records import Meeting


class MeetingRows(SqliteDomain):
    def add_meeting(self, m: Meeting) -> Meeting:
        """Keep a new meeting: ``m`` with the id it was given."""
        cursor = self._db.execute("INSERT INTO meetings (state, record) VALUES (?, '')", (m.state,))
        assert cursor.lastrowid is not None
        from dataclasses import replace

        added = replace(m, id=cursor.lastrowid)
        self.put_meeting(added)
        return added

    def meeting(self, meeting_id: int) -> Meeting | None:
        row = self._db.execute("SELECT record FROM meetings WHERE id = ?", (meeting_id,)).fetchone()
        if row is None:
            return None
        from memkeeper.meetings.records import decode

        return decode(row[0])

    def meetings(self, *, resolved: bool = False) -> list[Meeting]:
        """Open and escalated meetings by id (resolved ones too with ``resolved``)."""
        where = "" if resolved else " WHERE state != 'resolved'"
        rows = self._db.execute(f"SELECT record FROM meetings{where} ORDER BY id").fetchall()
        if not rows:
            return []
        from memkeeper.meetings.records import decode

        return [decode(row[0]) for row in rows]

    def serializing_meetings(self) -> list[Meeting]:
        """The meetings whose participants take turns (``serialize``), by id: asked in every
        claims transaction that changed a claim (the index answers none from no row)."""
        sql = "SELECT record FROM meetings WHERE state = 'serializing' ORDER BY id"
        rows = self._db.execute(sql).fetchall()
        if not rows:
            return []
        from memkeeper.meetings.records import decode

        return [decode(row[0]) for row in rows]

    def kept_meetings(self) -> list[tuple[int, float | None]]:
        """The resolved meetings, oldest id first: each id, and when it ended."""
        sql = (
            "SELECT id, COALESCE(json_extract(record, '$.settled_at'), "
            "json_extract(record, '$.resolved_at')) FROM meetings "
            "WHERE state = 'resolved' ORDER BY id"
        )
        return [(int(i), at) for i, at in self._db.execute(sql).fetchall()]

    def drop_meetings(self, ids: Sequence[int]) -> None:
        """Forget these meetings (call inside ``writing()``)."""
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ",".join("?" * len(part))
            self._db.execute(f"DELETE FROM meetings WHERE id IN ({marks})", part)

    def put_meeting(self, m: Meeting) -> None:
        from memkeeper.meetings.records import encode

        self._db.execute(
            "UPDATE meetings SET state = ?, record = ? WHERE id = ?", (m.state, encode(m), m.id)
        )
