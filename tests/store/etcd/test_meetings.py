"""Meetings in the etcd store: ``P/meet/<id>`` holds one record as JSON, ids from
``P/seq/meet``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from memkeeper.meetings import rules
from memkeeper.meetings.records import Plan, decode
from tests.store.etcd.conftest import etcd_only, key, n20, sent, stored

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore

NOW = 1_800_000_000.0


@etcd_only
def test_the_layout_of_a_meeting(store: EtcdStore) -> None:
    m = store.meetings.add_meeting(rules.opened(0, "a:1", ["b:2"], ["docs/"], NOW))
    keys = stored(store)
    assert decode(keys[key("meet/" + n20(1))]) == m
    assert keys[key("seq/meet")] == b"1"
    store.meetings.put_meeting(rules.escalated(m, ("@org",)))
    assert decode(stored(store)[key("meet/" + n20(1))]).state == "escalated"


@etcd_only
def test_a_serializing_meeting_is_indexed_and_a_claims_transaction_asks_at_no_cost(
    store: EtcdStore,
) -> None:
    m = store.meetings.add_meeting(rules.opened(0, "a:1", ["b:2"], ["docs/"], NOW))
    turns = rules.resolved(m, "h", Plan("serialize", who="b:2"), NOW)
    store.meetings.put_meeting(turns)
    assert stored(store)[key("meetser/" + n20(1))] == b"1"
    store.gateway.sent.clear()  # type: ignore[attr-defined]
    with store.writing():
        store.prefetch_claims()
        before = len(sent(store))
        assert store.meetings.serializing_meetings() == [turns]  # the index: from the prefetch
        assert len(sent(store)) == before + 1  # the meeting's own record: one get
    done = replace(turns, rev=turns.rev + 1, state="resolved", turn=1)
    store.meetings.put_meeting(done)
    assert key("meetser/" + n20(1)) not in stored(store)
    with store.writing():
        store.prefetch_claims()
        before = len(sent(store))
        assert store.meetings.serializing_meetings() == []
        assert len(sent(store)) == before  # none: nothing read beyond the prefetch
