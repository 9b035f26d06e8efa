"""Claims, waiters and counters in the etcd store: both tables under one prefix, each drop
changing its table's marker; a waiter put again is replaced, a reused token stored; two
racing bumps never hand out one value twice; claim keys held by etcd leases, revoked only once
a drop commits, renewed onto a new lease when theirs has gone."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from memkeeper.claims.waiters import ABANDON_GRACE_S
from memkeeper.clock import FakeClock
from memkeeper.store.etcd import EtcdStore
from memkeeper.store.retry import StoreRetry
from tests.store.etcd.conftest import (
    NOW,
    Interrupted,
    claim,
    etcd_only,
    key,
    lease_of,
    stored,
    under,
    waiter,
)

if TYPE_CHECKING:
    from tests.etcd_cluster import Cluster


@etcd_only
def test_claims_and_waiters_share_one_prefix_and_each_drop_changes_its_tables_marker(
    store: EtcdStore,
) -> None:
    store.put_claim(claim("c1", 1, NOW + 30))
    store.put_claim(claim("c2", 2, NOW + 30))
    store.put_waiter(waiter("w1", 1))
    store.bump("token")
    rows = under(store, b"lease/")
    assert set(rows) == {
        key("lease/claim", "c1"),
        key("lease/claim", "c2"),
        key("lease/grant", "c1"),
        key("lease/grant", "c2"),
        key("lease/wait", "w1"),
    }
    assert rows[key("lease/grant", "c1")] == rows[key("lease/claim", "c1")]  # without a lease
    assert lease_of(store, "c1", "grant") == 0
    fields = json.loads(rows[key("lease/claim", "c1")])
    assert fields[:9] == [1, "agent-a", "write", ["CLAUDE.md#build"], 0, False, NOW, NOW + 30, ""]
    assert fields[9] == lease_of(store, "c1") != 0  # the etcd lease and its TTL follow
    fields = json.loads(rows[key("lease/wait", "w1")])
    assert fields[:13] == [
        1, "agent-b", "read", ["docs/"], 5, True, 90.0, "review", 4242, NOW + 30, "waiting", None,
        None,  # its plan (format 4): none
    ]  # fmt: skip
    assert fields[13] == lease_of(store, "w1", "wait") != 0  # an etcd lease holds it too
    assert stored(store)[b"ctr/token"] == b"1"
    markers = []
    for drop in ("c1", "c2"):
        store.drop_claim(drop)
        markers.append(stored(store)[key("lease/claim", "")])
    assert markers[0] != markers[1]
    assert key("lease/wait", "") not in stored(store)  # the waiters' table was not dropped from
    store.drop_waiter("w1")
    assert set(under(store, b"lease/")) == {key("lease/claim", ""), key("lease/wait", "")}
    assert store.claim_table() == ([], [])  # markers are no rows


@etcd_only
def test_a_waiter_put_again_is_replaced_and_a_reused_token_is_stored(store: EtcdStore) -> None:
    """(SQLite's primary key and UNIQUE token would refuse both: ids and tokens come from
    ``bump``, so neither happens.)"""
    store.put_waiter(waiter("w1", 1))
    store.put_waiter(waiter("w1", 2, priority=9))
    assert store.waiter_rows() == [waiter("w1", 2, priority=9)]
    store.put_claim(claim("c1", 7, NOW + 30))
    store.put_claim(claim("c2", 7, NOW + 30))
    assert [(c.id, c.token) for c in store.claim_rows()] == [("c1", 7), ("c2", 7)]


@etcd_only
def test_two_racing_bumps_never_hand_out_one_value_twice(
    cluster: Cluster, prefix: bytes, other: EtcdStore
) -> None:
    theirs: list[int] = []
    raced = Interrupted(
        cluster.endpoints, lambda: theirs.append(other.bump("token")), cluster.access
    )
    racing = EtcdStore(raced, prefix)
    raced.times = 1
    mine = racing.bump("token")  # read 0, then theirs committed 1 before this commit
    racing.close()
    assert (theirs, mine) == ([1], 2)


# -- claims held by etcd leases -------------------------------------------------------------


@etcd_only
def test_a_dropped_claims_lease_is_revoked_only_once_the_drop_commits(
    store: EtcdStore, other: EtcdStore
) -> None:
    store.put_claim(claim("c1", 1, NOW + 30))
    lease = lease_of(store, "c1")

    def drop(then: Callable[[], object]) -> None:
        with store.writing():
            store.claim_table()
            store.drop_claim("c1")
            then()

    def fail() -> None:
        raise RuntimeError("the operation failed after the drop")

    with pytest.raises(RuntimeError):
        drop(fail)
    assert store.gateway.time_to_live(lease) > 0
    with pytest.raises(StoreRetry):
        drop(lambda: other.put_waiter(waiter("w1", 1)))  # the table changed meanwhile
    assert store.gateway.time_to_live(lease) > 0
    assert store.claim_row("c1") == claim("c1", 1, NOW + 30)
    store.drop_claim("c1")
    assert store.gateway.time_to_live(lease) == -1


@etcd_only
def test_a_renewal_whose_lease_has_gone_takes_a_new_one(store: EtcdStore) -> None:
    store.put_claim(claim("c1", 1, NOW + 30))
    lease = lease_of(store, "c1")
    with store.writing():
        store.claim_table()
        store.gateway.revoke(lease)  # it ran out meanwhile (and took the key with it)
        store.put_claim(claim("c1", 1, NOW + 20))
    renewed = lease_of(store, "c1")
    assert renewed not in (0, lease)
    assert store.gateway.time_to_live(renewed) > 0
    assert store.claim_row("c1") == claim("c1", 1, NOW + 20)


@etcd_only
def test_a_claim_stored_before_leases_is_read_renewed_onto_a_lease_and_dropped(
    store: EtcdStore,
) -> None:
    old = [1, "agent-a", "write", ["CLAUDE.md#build"], 0, False, NOW, NOW + 30, ""]
    store.gateway.put(store.prefix + key("lease/claim", "c1"), json.dumps(old).encode())
    assert store.claim_row("c1") == claim("c1", 1, NOW + 30)
    with store.writing():
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 40))
    lease = lease_of(store, "c1")
    assert lease != 0
    store.drop_claim("c1")
    assert store.claim_row("c1") is None
    assert store.gateway.time_to_live(lease) == -1


@etcd_only
@pytest.mark.parametrize("first", ["drop", "renew for longer"])
def test_a_claim_put_again_later_in_the_same_block_stays(store: EtcdStore, first: str) -> None:
    store.put_claim(claim("c1", 1, NOW + 30))
    with store.writing():
        store.claim_table()
        if first == "drop":
            store.drop_claim("c1")
        else:
            store.put_claim(claim("c1", 1, NOW + 300))
        store.put_claim(claim("c1", 1, NOW + 20))
    assert store.claim_row("c1") == claim("c1", 1, NOW + 20)  # as on SQLite


@etcd_only
def test_a_waiters_row_is_held_by_a_lease_that_ends_past_its_deadline_by_etcds_clock(
    store: EtcdStore,
) -> None:
    """Issue 22 (waits on etcd judged by each machine's wall clock): a process whose clock is
    a minute ahead took another machine's live wait for one far past its deadline and dropped
    it. Now no process judges another's deadline (``claimwaits.abandoned``, shared): etcd ends
    the row, ``ABANDON_GRACE_S`` after the deadline, by its own clock. A settled row keeps its
    lease; a dropped one's is revoked once the drop commits."""
    with store.writing():
        store.claim_time(FakeClock(NOW))
        store.put_waiter(waiter("w1", 1))  # its deadline: NOW + 30
    lease = lease_of(store, "w1", "wait")
    assert lease != 0
    assert 30 + ABANDON_GRACE_S - 2 <= store.gateway.time_to_live(lease) <= 30 + ABANDON_GRACE_S
    store.settle_waiter("w1", "granted")
    assert lease_of(store, "w1", "wait") == lease
    assert store.waiter_rows()[0].state == "granted"
    store.drop_waiter("w1")
    assert store.waiter_rows() == []
    assert store.gateway.time_to_live(lease) == -1  # revoked
