"""The contract of messages: posted with rising ids, received by the identity named (and by
everyone but the sender for ``all``), delivered once, acknowledged once, listed until
acknowledged unless asked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.coordination import Message
from tests.store.contract.conftest import TS

if TYPE_CHECKING:
    from memkeeper.store.protocol import StateStore

ALICE, BOB = "claude-code:s1", "codex:t2"


def test_messages_reach_whom_they_name(store: StateStore) -> None:
    with store.writing():
        first = store.mail.post_message("human", ALICE, "message", None, "hello", TS[0])
        store.mail.post_message("human", BOB, "message", None, "not yours", TS[1])
        third = store.mail.post_message(BOB, "all", "overlap", "CLAUDE.md#build", "me too", TS[2])
    assert first == Message(1, "human", ALICE, "message", None, "hello", TS[0])
    assert third.id == 3
    assert [m.id for m in store.mail.messages_for(ALICE)] == [1, 3]
    assert [m.id for m in store.mail.messages_for(BOB)] == [2]  # not its own message to all
    assert store.mail.message(3) == third
    assert store.mail.message(99) is None
    assert store.mail.messages_for("nobody") == [third]


def test_delivered_once_acked_once(store: StateStore) -> None:
    with store.writing():
        store.mail.post_message("human", ALICE, "release-request", "c1", "please", TS[0])
        store.mail.post_message("human", "all", "message", None, "all hands", TS[1])
    with store.writing():
        assert store.mail.mark_delivered(ALICE, ["m:1", "m:2", "expiring:c1:9"], TS[2]) == [
            "m:1",
            "m:2",
            "expiring:c1:9",
        ]
    with store.writing():
        assert store.mail.mark_delivered(ALICE, ["m:1", "expiring:c1:9"], TS[3]) == []
        assert store.mail.mark_delivered(BOB, ["m:2"], TS[3]) == ["m:2"]  # each recipient once
    listed = store.mail.messages_for(ALICE)
    assert [(m.id, m.delivered_at, m.acked_at) for m in listed] == [
        (1, TS[2], None),
        (2, TS[2], None),
    ]
    with store.writing():
        assert store.mail.ack_message(ALICE, 1, TS[4])
        assert not store.mail.ack_message(ALICE, 1, TS[5])
    assert [m.id for m in store.mail.messages_for(ALICE)] == [2]
    assert [(m.id, m.acked_at) for m in store.mail.messages_for(ALICE, acked=True)] == [
        (1, TS[4]),
        (2, None),
    ]
    assert [m.id for m in store.mail.messages_for(BOB)] == [2]  # Alice's ack is hers alone


def test_an_ack_before_delivery_counts_as_delivered(store: StateStore) -> None:
    with store.writing():
        store.mail.post_message("human", ALICE, "message", None, "hi", TS[0])
        assert store.mail.ack_message(ALICE, 1, TS[1])
        assert store.mail.mark_delivered(ALICE, ["m:1"], TS[2]) == []
    assert store.mail.messages_for(ALICE, acked=True)[0].delivered_at == TS[1]


def test_kept_messages_say_whether_given_and_dropped_ones_leave_no_trace(
    store: StateStore,
) -> None:
    with store.writing():
        store.mail.post_message("human", ALICE, "message", None, "old, told", TS[0])
        store.mail.post_message("human", ALICE, "message", None, "old, untold", TS[0])
        store.mail.post_message("human", "all", "message", None, "to all", TS[1])
        store.mail.post_message("human", BOB, "message", None, "newest", TS[1])
        store.mail.mark_delivered(ALICE, ["m:1", "m:3", "expiring:c1:9"], TS[1])
        store.mail.mark_delivered(BOB, ["m:3", "expiring:c2:9"], TS[4])
    assert store.mail.kept_messages() == [
        (1, ALICE, TS[0], True, "message", None),
        (2, ALICE, TS[0], False, "message", None),
        (3, "all", TS[1], False, "message", None),  # given to some, but not "its recipient"
        (4, BOB, TS[1], False, "message", None),
    ]
    with store.writing():
        store.mail.drop_messages([1, 3], TS[2])
    assert [m.id for m in store.mail.messages_for(ALICE, acked=True)] == [2]
    assert store.mail.message(1) is None
    assert [m.id for m in store.mail.messages_for(BOB)] == [4]
    with store.writing():  # told before the bound: dropped; after it: still said once
        assert store.mail.mark_delivered(ALICE, ["expiring:c1:9"], TS[5]) == ["expiring:c1:9"]
        assert store.mail.mark_delivered(BOB, ["expiring:c2:9"], TS[5]) == []
    with store.writing():
        third = store.mail.post_message("human", ALICE, "message", None, "new", TS[5])
    assert third.id == 5  # ids are never handed out again


def test_a_message_to_all_acked_by_one_stays_for_the_others_in_order(store: StateStore) -> None:
    with store.writing():
        for n in range(6):  # to Alice, to all, to Bob, to all…: one inbox holds them in order
            to = "all" if n % 2 else (ALICE if n % 4 == 0 else BOB)
            store.mail.post_message("human", to, "message", None, f"m{n}", TS[0])
    assert [m.text for m in store.mail.messages_for(ALICE)] == ["m0", "m1", "m3", "m4", "m5"]
    with store.writing():
        assert store.mail.ack_message(ALICE, 2, TS[1])  # m1, to all
    assert [m.text for m in store.mail.messages_for(ALICE)] == ["m0", "m3", "m4", "m5"]
    assert [m.text for m in store.mail.messages_for(BOB)] == ["m1", "m2", "m3", "m5"]
