"""Waking a waiter from any machine (``store.etcd.wakewatch``) against a real etcd: a claim
waiter's watch on its wake key, which another machine's lease operation puts (under the
lease of the waiter's row); a work waiter's watch on the items and on the ends of claims."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from memkeeper.store.etcd import codec, wakewatch
from memkeeper.work.rules import added
from tests.store.etcd.conftest import claim, etcd_only, waiter

if TYPE_CHECKING:
    from memkeeper.claims.waiters import WaiterRow
    from memkeeper.store.etcd import EtcdStore

pytestmark = etcd_only
PROMPT_S = 2.0  # a wake-up comes within this (~50 ms on a quiet machine; this one is not)


def queued(request_id: str, arrival: int) -> WaiterRow:
    """A queued request whose row's lease lasts a minute."""
    row = waiter(request_id, arrival)
    return row._replace(deadline=time.time() + 60)


def wake(store: EtcdStore, *request_ids: str) -> None:
    with store.writing():
        store.claim_table()  # (a lease operation reads the table first)
        store.wake_waiters(list(request_ids))


def test_a_wake_key_put_by_another_machine_wakes_its_waiter_only(
    store: EtcdStore, other: EtcdStore
) -> None:
    with other.writing():
        other.put_waiter(queued("c1", 1))
        other.put_waiter(queued("c2", 2))
    wake(other, "c1")  # before the watch: the waiter's own look finds what changed
    woken = threading.Event()
    watch = wakewatch.claim_wait(store, "c1", woken.set)
    try:
        assert not woken.wait(0.3)
        wake(other, "c2")
        assert not woken.wait(0.3), "woken by another waiter's wake key"
        started = time.monotonic()
        wake(other, "c1")
        assert woken.wait(10)
        assert time.monotonic() - started < PROMPT_S
    finally:
        watch.close()


def test_a_wake_key_goes_with_its_waiters_row(store: EtcdStore) -> None:
    with store.writing():
        store.put_waiter(queued("c1", 1))
    wake(store, "c1", "c9")  # c9 has no row: no key
    (row,) = store.gateway.range(store.prefix + b"lease/wait\0c1")[1]
    _, found = store.gateway.range(store.prefix + b"wake/c1")
    assert [kv.lease for kv in found] == [codec.waiter_lease(row.value)]
    assert store.gateway.range(store.prefix + b"wake/c9")[1] == []
    with store.writing():
        store.drop_waiter("c1")  # its lease is revoked after the commit: the key goes too
    assert store.gateway.range(store.prefix + b"wake/c1")[1] == []


def test_a_work_waiter_is_woken_by_an_item_and_by_a_claim_ending_not_by_a_grant(
    store: EtcdStore, other: EtcdStore
) -> None:
    woken = threading.Event()
    watch = wakewatch.work_wait(store, woken.set)
    held = replace(claim("c1", 1, time.time() + 60), granted_at=time.time())
    try:
        with other.writing():
            other.put_claim(held)
        assert not woken.wait(0.5), "woken by a grant"
        with other.writing():
            other.drop_claim("c1")
        assert woken.wait(10), "not woken by a release"
        woken.clear()
        with other.writing():
            other.work.add_work(added(0, "the api", "codex:t2", time.time(), known={}))
        assert woken.wait(10), "not woken by a new item"
    finally:
        watch.close()


def test_a_closed_watch_wakes_its_waiter_once_more(store: EtcdStore) -> None:
    woken = threading.Event()
    watch = wakewatch.claim_wait(store, "c1", woken.set)
    watch.close()
    assert woken.wait(5)
