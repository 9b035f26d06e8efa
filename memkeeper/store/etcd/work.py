"""Work items in the etcd store (``keys``: ``P/work/<id>`` an item not done — open, claimed or
failed —, ``P/workdone/<id>`` a done one, each the record as JSON; ids from ``P/seq/work``). Done
items move out of ``P/work/`` so that ``work next``, which scans the items not done, reads only
those however long the queue's history grows. A read inside ``writing()`` is compared at the commit
— the range of every item ``work next`` scanned included — so its read of the items and the claims,
its grant and its put commit together or not at all. Not a mixin of ``EtcdStore``:
``EtcdStore.work``, loaded on first use, through the store's core (its transactions, its raw access
to keys)."""

from __future__ import annotations

from memkeeper.store.etcd import keys
from memkeeper.store.etcd.core import EtcdDomain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.work.items import Item

LIVE, DONE = "work", "workdone"
_UNDONE = frozenset({"open", "claimed", "failed"})


class WorkKeys(EtcdDomain):
    def add_work(self, item: Item) -> Item:
        """Keep a new item: ``item`` with the id it was given."""
        result: Item = self._core._alone(self._add_work, item)
        return result

    def _add_work(self, item: Item) -> Item:
        from dataclasses import replace

        added = replace(item, id=self._core._next_id("work"))
        self._put_work(added)
        return added

    def work_item(self, item_id: int) -> Item | None:
        number = keys.number(item_id)
        # a done item never changes again: no comparison at the commit (etcd allows 128)
        raw = self._core._get(self._core._key(DONE, number), track=False)
        raw = raw if raw is not None else self._core._get(self._core._key(LIVE, number))
        if raw is None:
            return None
        from memkeeper.work.items import decode

        return decode(raw)

    def work_items(self, states: Sequence[str] = ()) -> list[Item]:
        """The items in ``states`` (none named: all), by id."""
        tables = [LIVE] if states and set(states) <= _UNDONE else [LIVE, DONE]
        stored = [
            kv for table in tables for kv in self._core._scan_prefix(self._core._key(table, ""))
        ]
        if not stored:
            return []
        from memkeeper.work.items import decode

        found = sorted((decode(raw) for _, raw in stored), key=lambda i: i.id)
        return [i for i in found if not states or i.state in states]

    def put_work(self, item: Item) -> None:
        self._core._alone(self._put_work, item)

    def _put_work(self, item: Item) -> None:
        from memkeeper.work.items import encode

        number = keys.number(item.id)
        table = LIVE if item.state in _UNDONE else DONE
        if table == DONE and self._core._get(self._core._key(LIVE, number)) is not None:
            self._core._delete(self._core._key(LIVE, number))
        self._core._put(self._core._key(table, number), encode(item).encode())

    def done_work(self) -> list[tuple[int, float | None]]:
        """The done items, oldest id first: each id, and when it ended (a done item never
        changes again: nothing is compared at the commit)."""
        from memkeeper.store.etcd.gateway import prefix_end

        start = self._core._key(DONE, "")
        stored = self._core._scan(start, prefix_end(start), track=False)
        if not stored:
            return []
        from memkeeper.work.items import decode

        found = (decode(raw) for _, raw in stored)
        return sorted((i.id, i.ended_at) for i in found)

    def drop_work(self, ids: Sequence[int]) -> None:
        """Forget these items, done or not (call inside ``writing()``)."""
        for item_id in ids:
            for table in (LIVE, DONE):
                self._core._alone(self._core._delete, self._core._key(table, keys.number(item_id)))
