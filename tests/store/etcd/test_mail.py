"""Messages in the etcd store: ``P/msg/<id>`` holds one, ``P/to/<recipient>\\0<id>`` indexes
it, ``P/dlv/<recipient>\\0<key>`` says what that recipient was told; two blocks marking one
delivery cannot both commit."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from memkeeper.store.retry import StoreRetry
from tests.store.etcd.conftest import TS, etcd_only, key, n20, sent, stored

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore


@etcd_only
def test_the_layout_of_a_message_and_its_delivery(store: EtcdStore) -> None:
    store.mail.post_message("human", "claude-code:s1", "message", None, "hi", TS[0])
    store.mail.mark_delivered("claude-code:s1", ["m:1"], TS[1])
    keys = stored(store)
    assert json.loads(keys[key("msg/" + n20(1))]) == [
        1, "human", "claude-code:s1", "message", None, "hi", TS[0],
    ]  # fmt: skip
    assert keys[key("to/claude-code:s1", n20(1))] == b""
    assert json.loads(keys[key("dlv/claude-code:s1", "m:1")]) == [TS[1], None]
    assert keys[key("seq/msg")] == b"1"


@etcd_only
def test_two_blocks_marking_one_delivery_cannot_both_commit(
    store: EtcdStore, other: EtcdStore
) -> None:
    store.mail.post_message("human", "a:1", "message", None, "once", TS[0])

    def mark_while_they_do() -> None:
        with store.writing():
            assert store.mail.mark_delivered("a:1", ["m:1"], TS[1]) == ["m:1"]
            assert other.mail.mark_delivered("a:1", ["m:1"], TS[2]) == ["m:1"]  # commits first

    with pytest.raises(StoreRetry):
        mark_while_they_do()
    assert store.mail.mark_delivered("a:1", ["m:1"], TS[3]) == []
    assert store.mail.messages_for("a:1")[0].delivered_at == TS[2]


@etcd_only
def test_a_post_that_trims_does_not_conflict_with_an_ack_meanwhile(
    store: EtcdStore, other: EtcdStore
) -> None:
    store.mail.post_message("human", "a:1", "message", None, "first", TS[0])
    with store.writing():
        store.mail.post_message("human", "a:1", "message", None, "second", TS[1])
        assert [mid for mid, *_ in store.mail.kept_messages()] == [1, 2]  # what a trim reads
        assert other.mail.ack_message("a:1", 1, TS[2])  # another writer, before this commit
    assert [m.text for m in store.mail.messages_for("a:1")] == ["second"]


@etcd_only
def test_the_messages_waiting_are_read_in_one_range_not_one_get_each(store: EtcdStore) -> None:
    for n in range(6):
        store.mail.post_message("human", "a:1" if n % 2 else "b:2", "message", None, f"m{n}", TS[0])
    sent(store).clear()
    assert [m.text for m in store.mail.messages_for("a:1")] == ["m1", "m3", "m5"]
    assert len(sent(store)) == 4  # its index, to all's, its deliveries, and the messages' range
