"""The event log and tallies of the etcd store: an event is one record plus its index keys
(by type, by path, the last by path, by claim), the head beside them; a tally is keyed by its
rounded time and counted by its exact one."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.store.etcd.conftest import (
    TS,
    etcd_only,
    key,
    n20,
    stored,
    under,
)

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore


@etcd_only
def test_an_event_is_one_record_plus_its_index_keys(store: EtcdStore) -> None:
    with store.writing():
        one = store.append_event(TS[0], "a", "section.patched", "C.md", "build", {"reason": "m"})
        two = store.append_event(TS[1], "a", "file.indexed", "C.md", None, {})
        three = store.append_event(TS[2], "a", "claim.released", None, None, {"id": "c7"})
        four = store.append_event(TS[3], "a", "claim.expired", None, None, {"id": 7})  # no id
    keys = stored(store)
    record = json.loads(keys[key("ev/" + n20(1))])
    assert record == [
        *(TS[0], "a", "section.patched", "C.md", "build", {"reason": "m"}),
        *(one.prev, one.hash),
    ]
    assert keys[b"cache/events:head"] == f"4 {four.hash}".encode()
    assert under(store, b"evt/") == {
        key("evt/section.patched", TS[0], n20(1)): b'"m"',
        key("evt/file.indexed", TS[1], n20(2)): b"null",
        key("evt/claim.released", TS[2], n20(3)): b"null",
        key("evt/claim.expired", TS[3], n20(4)): b"null",
    }
    assert under(store, b"evp/") == {
        key("evp/C.md", "+build", n20(1)): b"",
        key("evp/C.md", "-", n20(2)): b"",
    }
    assert under(store, b"evl/") == {
        key("evl/C.md", "+build"): n20(1).encode(),
        key("evl/C.md", "-"): n20(2).encode(),
    }
    assert under(store, b"evc/") == {key("evc/c7", n20(3)): b""}  # claim ends by claim
    assert under(store, b"evy/") == {  # by type and id: the path, for a region's newest
        key("evy/section.patched", n20(1)): b'"C.md"',
        key("evy/file.indexed", n20(2)): b'"C.md"',
        key("evy/claim.released", n20(3)): b"null",
        key("evy/claim.expired", n20(4)): b"null",
    }
    assert store.last_claim_event("c7") == three
    assert store.last_events("C.md") == {"build": one, None: two}


@etcd_only
def test_a_tally_is_keyed_by_its_rounded_time_and_counted_by_its_exact_one(
    store: EtcdStore,
) -> None:
    at = 100.0000004
    store.tally("conflict", at)
    store.tally("conflict", at)  # the same instant: a key of its own
    keys = under(store, b"tally/")
    assert len(keys) == 2
    assert all(k.startswith(key("tally/conflict", "0000000000100.000000", "")) for k in keys)
    assert {float(v) for v in keys.values()} == {at}
    assert store.tally_count("conflict", at) == 2
    assert store.tally_count("conflict", 100.0000005) == 0  # the same key prefix, but later
