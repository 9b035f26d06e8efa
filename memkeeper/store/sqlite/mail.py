"""The messages of the SQLite store, and what each recipient was told (``deliveries``: a
message's ``m:ID``, or a computed notice's key) and acknowledged.

Not a mixin of ``Store``: ``Store.mail``, loaded on first use (a read or a patch that
lands never uses it), on the store's connection and in its transactions. Call the writing
methods inside ``Store.writing()``.
"""

from __future__ import annotations

from memkeeper.store.sqlite.core import SqliteDomain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from memkeeper.coordination import Message

_COLUMNS = "m.id, m.sender, m.recipient, m.kind, m.about, m.text, m.sent_at"


class MailRows(SqliteDomain):
    def post_message(
        self, sender: str, to: str, kind: str, about: str | None, text: str, at: str
    ) -> Message:
        cursor = self._db.execute(
            "INSERT INTO messages (sender, recipient, kind, about, text, sent_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (sender, to, kind, about, text, at),
        )
        assert cursor.lastrowid is not None
        return _message((cursor.lastrowid, sender, to, kind, about, text, at))

    def message(self, message_id: int) -> Message | None:
        sql = f"SELECT {_COLUMNS} FROM messages m WHERE m.id = ?"
        row = self._db.execute(sql, (message_id,)).fetchone()
        return None if row is None else _message(row)

    def messages_for(self, recipient: str, *, acked: bool = False) -> list[Message]:
        """The messages ``recipient`` receives (named, or ``all`` from someone else), oldest
        first, with its delivery and acknowledgement; the acknowledged ones only with
        ``acked``."""
        sql = (
            f"SELECT {_COLUMNS}, d.delivered_at, d.acked_at FROM messages m "
            "LEFT JOIN deliveries d ON d.recipient = ?1 AND d.key = 'm:' || m.id "
            "WHERE (m.recipient = ?1 OR (m.recipient = 'all' AND m.sender != ?1))"
            f"{'' if acked else ' AND d.acked_at IS NULL'} ORDER BY m.id"
        )
        return [_message(row) for row in self._db.execute(sql, (recipient,)).fetchall()]

    def mark_delivered(self, recipient: str, marks: Sequence[str], at: str) -> list[str]:
        """Mark ``marks`` delivered to ``recipient``: those that were not yet, in order."""
        fresh = []
        for key in marks:
            cursor = self._db.execute(
                "INSERT INTO deliveries (recipient, key, delivered_at) VALUES (?, ?, ?) "
                "ON CONFLICT (recipient, key) DO UPDATE SET delivered_at = excluded.delivered_at "
                "WHERE delivered_at IS NULL",
                (recipient, key, at),
            )
            if cursor.rowcount:
                fresh.append(key)
        return fresh

    def ack_message(self, recipient: str, message_id: int, at: str) -> bool:
        """Acknowledge a message for ``recipient`` (delivered too, if it was not): False when
        it already was."""
        cursor = self._db.execute(
            "INSERT INTO deliveries (recipient, key, delivered_at, acked_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (recipient, key) DO UPDATE SET acked_at = excluded.acked_at, "
            "delivered_at = coalesce(delivered_at, excluded.delivered_at) WHERE acked_at IS NULL",
            (recipient, f"m:{message_id}", at, at),
        )
        return bool(cursor.rowcount)

    def kept_messages(self) -> list[tuple[int, str, str, bool, str, str | None]]:
        """Every message kept, oldest first: ``(id, to, sent_at, given, kind, about)``,
        ``given`` when its named recipient was given it (delivered or acknowledged)."""
        rows = self._db.execute(
            "SELECT m.id, m.recipient, m.sent_at, d.delivered_at IS NOT NULL, m.kind, m.about "
            "FROM messages m "
            "LEFT JOIN deliveries d ON d.recipient = m.recipient AND d.key = 'm:' || m.id "
            "ORDER BY m.id"
        ).fetchall()
        return [(mid, to, at, bool(given), kind, about) for mid, to, at, given, kind, about in rows]

    def drop_messages(self, message_ids: Sequence[int], notices_before: str) -> None:
        """Drop these messages with what any recipient was told of them, and what computed
        notices were told before ``notices_before``."""
        ids = [(mid,) for mid in message_ids]
        self._db.executemany("DELETE FROM messages WHERE id = ?", ids)
        self._db.executemany("DELETE FROM deliveries WHERE key = 'm:' || ?", ids)
        self._db.execute(
            "DELETE FROM deliveries WHERE key NOT LIKE 'm:%' AND delivered_at < ?",
            (notices_before,),
        )


def _message(row: tuple[Any, ...]) -> Message:
    # The records' module is loaded by the first message: a read or a patch has none.
    from memkeeper.coordination import Message

    return Message(*row)
