"""The work items of the SQLite store: one row each, the record as JSON beside its state.

Not a mixin of ``Store``: ``Store.work``, loaded on first use (a read or a patch that
lands never uses it), on the store's connection and in its transactions. Call the writing
methods inside ``Store.writing()``: its ``BEGIN IMMEDIATE`` makes ``work next``'s read of the
items and the claims, its grant and its put one step nobody else can come between.
"""

from __future__ import annotations

from memkeeper.store.sqlite.core import SqliteDomain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.work.items import Item


class WorkRows(SqliteDomain):
    def add_work(self, item: Item) -> Item:
        """Keep a new item: ``item`` with the id it was given."""
        from dataclasses import replace

        cursor = self._db.execute("INSERT INTO work (state, record) VALUES (?, '')", (item.state,))
        assert cursor.lastrowid is not None
        added = replace(item, id=cursor.lastrowid)
        self.put_work(added)
        return added

    def work_item(self, item_id: int) -> Item | None:
        row = self._db.execute("SELECT record FROM work WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            return None
        from memkeeper.work.items import decode

        return decode(row[0])

    def work_items(self, states: Sequence[str] = ()) -> list[Item]:
        """The items in ``states`` (none named: all), by id."""
        where = f" WHERE state IN ({','.join('?' * len(states))})" if states else ""
        sql = f"SELECT record FROM work{where} ORDER BY id"
        rows = self._db.execute(sql, tuple(states)).fetchall()
        if not rows:
            return []
        from memkeeper.work.items import decode

        return [decode(row[0]) for row in rows]

    def put_work(self, item: Item) -> None:
        from memkeeper.work.items import encode

        sql = "UPDATE work SET state = ?, record = ? WHERE id = ?"
        self._db.execute(sql, (item.state, encode(item), item.id))

    def done_work(self) -> list[tuple[int, float | None]]:
        """The done items, oldest id first: each id, and when it ended."""
        sql = "SELECT id, json_extract(record, '$.ended_at') FROM work WHERE state = 'done'"
        return [(int(i), at) for i, at in self._db.execute(sql + " ORDER BY id").fetchall()]

    def drop_work(self, ids: Sequence[int]) -> None:
        """Forget these items (call inside ``writing()``)."""
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            self._db.execute(f"DELETE FROM work WHERE id IN ({','.join('?' * len(part))})", part)
