"""Messages in the etcd store: ``P/msg/<id>`` holds one, ``P/to/<recipient>\\0<id>`` indexes
it, ``P/dlv/<recipient>\\0<key>`` says what that recipient was told; two blocks marking one
delivery cannot both commit."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from memkeeper.store.retry import StoreRetry
from tests.store.etcd.conftest import TS, etcd_only, key, n20, stored

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore


@etcd_only
def test_the_layout_of_a_message_and_its_delivery(store: EtcdStore) -> None:
    store.post_message("human", "claude-code:s1", "message", None, "hi", TS[0])
    store.mark_delivered("claude-code:s1", ["m:1"], TS[1])
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
    store.post_message("human", "a:1", "message", None, "once", TS[0])

    def mark_while_they_do() -> None:
        with store.writing():
            assert store.mark_delivered("a:1", ["m:1"], TS[1]) == ["m:1"]
            assert other.mark_delivered("a:1", ["m:1"], TS[2]) == ["m:1"]  # commits first

    with pytest.raises(StoreRetry):
        mark_while_they_do()
    assert store.mark_delivered("a:1", ["m:1"], TS[3]) == []
    assert store.messages_for("a:1")[0].delivered_at == TS[2]
