"""The contract of work items: added with rising ids, read back whole, listed by id (in given
states), replaced by ``put_work``; a read of every item and a put inside ``writing()`` are one
step — on etcd a racing writer that changed any item read makes the commit fail, so two
takers of one item cannot both commit (the retry sees it taken)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from memkeeper.work import rules
from memkeeper.work.items import Item
from tests.store.contract.conftest import NOW, etcd_on, etcd_only, race

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore
    from memkeeper.store.protocol import StateStore
    from tests.etcd_cluster import Cluster


def draft(title: str = "Fix the build", **kw: object) -> Item:
    return replace(Item(0, 1, title, "open", "w1", NOW, ("src/",), 2, (), "why"), **kw)  # type: ignore[arg-type]


def test_items_are_kept_whole_and_listed_by_id_and_state(store: StateStore) -> None:
    with store.writing():
        first = store.work.add_work(draft())
        second = store.work.add_work(draft("Docs", after=(1,), paths=()))
    assert (first.id, second.id) == (1, 2)
    assert store.work.work_item(1) == first
    assert store.work.work_item(2) == replace(draft("Docs", after=(1,), paths=()), id=2)
    assert store.work.work_item(99) is None
    taken = replace(first, rev=2, state="claimed", claim="c4", agent="w2", claimed_at=NOW + 1)
    with store.writing():
        store.work.put_work(taken)
    assert store.work.work_item(1) == taken
    assert store.work.work_items() == [taken, second]
    assert store.work.work_items(["open"]) == [second]
    assert store.work.work_items(["claimed", "done"]) == [taken]


def test_an_item_added_outside_a_transaction_commits_alone(store: StateStore) -> None:
    added = store.work.add_work(draft())
    store.work.put_work(rules.ended(added, "failed", NOW + 5, "no"))
    assert store.work.work_items(["failed"])[0].reason == "no"


@etcd_only
def test_two_takers_of_one_item_never_both_commit(cluster: Cluster, prefix: bytes) -> None:
    setup = etcd_on(cluster, prefix)
    with setup.writing():
        for n in range(6):
            setup.work.add_work(draft(f"item {n}"))
    setup.close()

    def take(store: EtcdStore, actor: str, n: int) -> None:
        free = [i for i in store.work.work_items() if i.state == "open"]
        if free:
            store.work.put_work(replace(free[0], rev=free[0].rev + 1, state="claimed", agent=actor))

    race(cluster, prefix, 3, take)
    check = etcd_on(cluster, prefix)
    try:
        items = check.work.work_items()
        assert [i.state for i in items] == ["claimed"] * 6
        assert all(i.rev == 2 for i in items)  # each taken exactly once
        assert sorted(i.agent or "" for i in items).count("a") == 3
    finally:
        check.close()


@etcd_only
def test_reading_many_done_items_in_one_transaction_compares_none_of_them(
    cluster: Cluster, prefix: bytes
) -> None:
    store = etcd_on(cluster, prefix)
    try:
        done = [store.work.add_work(rules.ended(draft(f"{n}"), "done", NOW)) for n in range(150)]
        with store.writing():  # etcd compares at most 128 keys in one transaction
            assert [store.work.work_item(i.id) for i in done] == done
            store.work.add_work(draft("after them all", after=tuple(i.id for i in done[:100])))
        assert len(store.work.work_items(["open"])) == 1
    finally:
        store.close()


def test_done_items_are_listed_with_when_they_ended_and_dropped_by_id(store: StateStore) -> None:
    with store.writing():
        items = [store.work.add_work(draft(f"t{n}")) for n in range(4)]
        store.work.put_work(rules.ended(items[2], "done", NOW + 7))
        store.work.put_work(rules.ended(items[0], "done", NOW + 9))
        store.work.put_work(rules.ended(items[1], "failed", NOW + 8, "red"))
    assert store.work.done_work() == [(1, NOW + 9), (3, NOW + 7)]
    with store.writing():
        store.work.drop_work([1, 2])
    assert store.work.done_work() == [(3, NOW + 7)]
    assert [i.id for i in store.work.work_items()] == [3, 4]
    assert (store.work.work_item(1), store.work.work_item(2)) == (None, None)
    assert store.work.add_work(draft()).id == 5  # ids are never reused
