"""Work items in the etcd store: ``P/work/<id>`` holds the record of an item not done (open,
claimed, failed) as JSON, ``P/workdone/<id>`` a done one's; ids from ``P/seq/work``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.work import rules
from memkeeper.work.items import decode
from tests.store.etcd.conftest import etcd_only, key, n20, stored

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore

NOW = 1_800_000_000.0


@etcd_only
def test_the_layout_of_a_work_item(store: EtcdStore) -> None:
    item = store.work.add_work(rules.added(0, "x", "a:1", NOW, paths=["src/"], known={}))
    keys = stored(store)
    assert decode(keys[key("work/" + n20(1))]) == item
    assert keys[key("seq/work")] == b"1"
    store.work.put_work(rules.returned(item, "expired"))
    assert decode(stored(store)[key("work/" + n20(1))]).state == "open"


@etcd_only
def test_a_done_item_moves_out_of_the_range_next_scans(store: EtcdStore) -> None:
    item = store.work.add_work(rules.added(0, "x", "a:1", NOW, known={}))
    done = rules.ended(item, "done", NOW + 1)
    store.work.put_work(done)
    keys = stored(store)
    assert key("work/" + n20(1)) not in keys
    assert decode(keys[key("workdone/" + n20(1))]) == done
    assert store.work.work_item(1) == done
    assert store.work.work_items(["open", "claimed", "failed"]) == []
    assert store.work.work_items() == [done]
    failed = store.work.add_work(
        rules.ended(rules.added(0, "y", "a:1", NOW, known={}), "failed", NOW)
    )
    assert key("work/" + n20(2)) in stored(store)
    assert store.work.work_items(["failed"]) == [failed]
