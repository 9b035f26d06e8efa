"""The wait for mail on etcd (``store.etcd.mailwatch``) against a real etcd: a message posted
by another machine's store after the watch began wakes it, one posted before does not (the
waiter's own look finds that one), and a closed watch wakes its waiter once more."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memkeeper.store.etcd.mailwatch import MailWatch
from tests.store.etcd.conftest import TS, etcd_only

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore

pytestmark = etcd_only


def post(store: EtcdStore, to: str) -> None:
    with store.writing():
        store.mail.post_message("codex:t2", to, "message", None, "hi", TS[0])


def test_a_message_posted_after_the_watch_began_wakes_it(
    store: EtcdStore, other: EtcdStore
) -> None:
    post(other, "claude-code:s1")  # before: the waiter's look finds it, no wake-up needed
    watch = MailWatch(store)
    try:
        assert watch.block(0.3) is False
        started = time.monotonic()
        post(other, "all")
        assert watch.block(10) is True
        assert time.monotonic() - started < 5
        assert watch.block(0.1) is False  # told once
    finally:
        watch.close()


def test_a_closed_watch_wakes_its_waiter(store: EtcdStore) -> None:
    watch = MailWatch(store)
    watch.close()
    assert watch.block(5) is True
