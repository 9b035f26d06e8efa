"""Meetings in the etcd store: ``P/meet/<id>`` holds one record as JSON, ids from
``P/seq/meet``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.meetings import rules
from memkeeper.meetings.records import decode
from tests.store.etcd.conftest import etcd_only, key, n20, stored

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore

NOW = 1_800_000_000.0


@etcd_only
def test_the_layout_of_a_meeting(store: EtcdStore) -> None:
    m = store.add_meeting(rules.opened(0, "a:1", ["b:2"], ["docs/"], NOW))
    keys = stored(store)
    assert decode(keys[key("meet/" + n20(1))]) == m
    assert keys[key("seq/meet")] == b"1"
    store.put_meeting(rules.escalated(m, ("@org",)))
    assert decode(stored(store)[key("meet/" + n20(1))]).state == "escalated"
