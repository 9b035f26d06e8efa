"""The contract of claims, the queue and counters (as tests/store/sqlite/test_claims.py): bump,
claims round-tripped, ordered, replaced, dropped; waiters; the claim table; a block that
raises; on etcd, concurrent grants from two stores, a claim another store makes meanwhile, a
change of the table meanwhile, and claims ended by etcd's leases (SQLite's, ended by the
time it is given: tests/store/sqlite/test_claims.py)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from memkeeper.clock import FakeClock
from memkeeper.store.retry import StoreRetry
from tests.store.contract.conftest import (
    NOW,
    claim,
    etcd_on,
    etcd_only,
    race,
    retrying,
    waiter,
)

if TYPE_CHECKING:
    from memkeeper.claims.decisions import Claim
    from memkeeper.store.etcd import EtcdStore
    from memkeeper.store.protocol import StateStore
    from tests.etcd_cluster import Cluster


def test_bump_counts_each_counter_up_from_one(store: StateStore) -> None:
    with store.writing():
        assert [store.bump("token") for _ in range(3)] == [1, 2, 3]
        assert store.bump("request") == 1
        assert store.bump("token") == 4
    with store.writing():
        assert store.bump("token") == 5
    assert store.bump("request") == 2  # outside a block: committed alone


def test_bump_dropped_with_its_block_hands_the_value_out_again(store: StateStore) -> None:
    with store.writing():
        store.bump("token")

    def bump_then_fail() -> None:
        with store.writing():
            assert store.bump("token") == 2
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        bump_then_fail()
    with store.writing():
        assert store.bump("token") == 2


def test_a_claim_round_trips_field_for_field(store: StateStore) -> None:
    stored = replace(claim("c1", 7, NOW + 120), strict=True, priority=3, objective="fix it é")
    with store.writing():
        store.put_claim(stored)
        assert store.claim_row("c1") == stored  # read-your-writes
    found = store.claim_row("c1")
    assert found == stored
    assert found is not None
    assert (found.targets, found.strict, type(found.expires_at)) == (stored.targets, True, float)
    assert store.claim_row("nope") is None


def test_claim_rows_come_in_token_order(store: StateStore) -> None:
    with store.writing():
        for id, token in [("b", 5), ("a", 9), ("c", 1), ("c10", 10)]:
            store.put_claim(claim(id, token, NOW + 60))
    assert [c.id for c in store.claim_rows()] == ["c", "b", "a", "c10"]


def test_putting_a_claim_again_replaces_it(store: StateStore) -> None:
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
        store.put_claim(claim("c1", 1, NOW + 600))
    (only,) = store.claim_rows()
    assert only.expires_at == NOW + 600
    store.put_claim(claim("c1", 1, NOW + 900))  # outside a block: committed alone
    assert store.claim_rows() == [claim("c1", 1, NOW + 900)]


def test_a_dropped_claim_is_gone(store: StateStore) -> None:
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
        store.put_claim(claim("c2", 2, NOW + 60))
        store.drop_claim("c1")
        assert [c.id for c in store.claim_rows()] == ["c2"]
    assert [c.id for c in store.claim_rows()] == ["c2"]
    assert store.claim_row("c1") is None
    store.drop_claim("c2")
    store.drop_claim("never")  # nothing to drop: nothing happens
    assert store.claim_rows() == []
    assert store.claim_table() == ([], [])


def test_any_live_claim_reads_the_claims_clock_only_when_a_claim_is_stored(
    store: StateStore,
) -> None:
    """A patch asks it of every root: where nobody claims, it loads no clock (start-up)."""
    asked: list[float] = []

    def now() -> float:
        asked.append(NOW)
        return NOW

    assert store.any_live_claim(now) is False
    assert asked == []
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
    assert store.any_live_claim(now) is True
    assert asked == [NOW]


def test_a_waiter_round_trips_with_its_request(store: StateStore) -> None:
    stored = waiter("w1", 1)
    with store.writing():
        store.put_waiter(stored)
    (loaded,) = store.waiter_rows()
    assert loaded == stored
    assert loaded.request.targets == ("docs/",)
    assert loaded.request.strict is True
    assert type(loaded.request.ttl) is float


def test_waiters_come_in_arrival_order_whatever_their_priority(store: StateStore) -> None:
    with store.writing():
        for id, arrival, priority in [("w3", 3, 9), ("w1", 1, 0), ("w10", 10, 1), ("w2", 2, 5)]:
            store.put_waiter(waiter(id, arrival, priority))
    assert [w.request.id for w in store.waiter_rows()] == ["w1", "w2", "w3", "w10"]


def test_settling_a_waiter_records_its_outcome_and_reason(store: StateStore) -> None:
    with store.writing():
        store.put_waiter(waiter("w1", 1))
        store.put_waiter(waiter("w2", 2))
        store.settle_waiter("w1", "aborted", "deadlock")
        store.settle_waiter("w2", "granted")
        store.settle_waiter("nope", "granted")  # no such wait: nothing happens
    settled = {w.request.id: (w.state, w.reason) for w in store.waiter_rows()}
    assert settled == {"w1": ("aborted", "deadlock"), "w2": ("granted", None)}
    store.settle_waiter("w2", "aborted", "timeout")  # outside a block: committed alone
    assert store.waiter_rows()[1] == waiter("w2", 2)._replace(state="aborted", reason="timeout")


def test_a_dropped_waiter_is_gone(store: StateStore) -> None:
    with store.writing():
        store.put_waiter(waiter("w1", 1))
        store.put_waiter(waiter("w2", 2))
        store.drop_waiter("w1")
    assert store.waiter_rows() == [waiter("w2", 2)]
    store.drop_waiter("w2")
    assert store.waiter_rows() == []


def test_the_claim_table_is_both_tables_in_their_orders(store: StateStore) -> None:
    assert store.claim_table() == ([], [])
    with store.writing():
        for id, token in [("b", 5), ("a", 9), ("gone", 1)]:
            store.put_claim(claim(id, token, NOW + 60 if id != "gone" else NOW - 1))
        for id, arrival in [("w3", 3), ("w1", 1)]:
            store.put_waiter(waiter(id, arrival))
        store.settle_waiter("w1", "aborted", "deadlock")
    claims, waiters = store.claim_table()
    assert claims == store.claim_rows()  # expired ones too: the caller sweeps them
    assert [c.id for c in claims] == ["gone", "b", "a"]
    assert waiters == store.waiter_rows()
    assert [(w.request.id, w.state, w.reason) for w in waiters] == [
        ("w1", "aborted", "deadlock"),
        ("w3", "waiting", None),
    ]
    with store.reading():
        assert store.claim_table() == (claims, waiters)


def test_the_claim_table_with_claims_only_or_waiters_only(store: StateStore) -> None:
    with store.writing():
        store.put_waiter(waiter("w1", 1))
    assert store.claim_table() == ([], [waiter("w1", 1)])
    with store.writing():
        store.drop_waiter("w1")
        store.put_claim(claim("c1", 1, NOW + 60))
        assert store.claim_table() == ([claim("c1", 1, NOW + 60)], [])  # read-your-writes
    assert store.claim_table() == ([claim("c1", 1, NOW + 60)], [])


def test_a_lease_block_that_raises_leaves_nothing(store: StateStore) -> None:
    with store.writing():
        store.put_claim(claim("kept", 1, NOW + 60))
        store.put_waiter(waiter("w1", 1))

    def everything_then_fail() -> None:
        with store.writing():
            store.bump("token")
            store.put_claim(claim("c2", 2, NOW + 60))
            store.drop_claim("kept")
            store.settle_waiter("w1", "granted")
            store.put_waiter(waiter("w2", 2))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        everything_then_fail()
    assert store.claim_table() == ([claim("kept", 1, NOW + 60)], [waiter("w1", 1)])
    assert store.bump("token") == 1


# -- etcd only ------------------------------------------------------------------------------


@etcd_only
def test_concurrent_grants_from_two_stores_get_tokens_one_to_n(
    cluster: Cluster, prefix: bytes
) -> None:
    per_thread = 15

    def grant(store: EtcdStore, actor: str, n: int) -> None:
        store.claim_table()  # as every lease operation starts
        token = store.bump("token")
        store.put_claim(claim(f"{actor}{n}", token, NOW + 60, (f"{actor}/{n}.md",)))

    race(cluster, prefix, per_thread, grant)
    reader = etcd_on(cluster, prefix)
    claims = reader.claim_rows()
    assert [c.token for c in claims] == list(range(1, 2 * per_thread + 1))  # no gap, no twice
    assert sorted(c.id for c in claims) == sorted(
        f"{actor}{n}" for actor in "ab" for n in range(per_thread)
    )
    for actor in "ab":  # each store's grants in its own order
        mine = [c for c in claims if c.id.startswith(actor)]
        assert [c.id for c in mine] == [f"{actor}{n}" for n in range(per_thread)]
    assert reader.bump("token") == 2 * per_thread + 1
    reader.close()


@etcd_only
def test_a_claim_of_a_target_another_store_claims_meanwhile_retries_and_sees_it(
    cluster: Cluster, prefix: bytes
) -> None:
    one, other = etcd_on(cluster, prefix), etcd_on(cluster, prefix)
    target = ("CLAUDE.md#build",)
    attempts: list[list[Claim]] = []

    def claim_unless_held(store: EtcdStore, id: str, interleave: bool) -> Claim | None:
        held, _ = store.claim_table()
        attempts.append(held)
        if any(set(c.targets) & set(target) for c in held):
            return None  # busy: somebody holds it
        if interleave and len(attempts) == 1:  # another machine claims it meanwhile
            assert retrying(other, lambda: claim_unless_held(other, "theirs", False))
        granted = claim(id, store.bump("token"), NOW + 60, target)
        store.put_claim(granted)
        return granted

    with pytest.raises(StoreRetry), one.writing():
        claim_unless_held(one, "mine", True)
    assert [c.id for c in one.claim_rows()] == ["theirs"]  # nothing of "mine" was applied
    assert retrying(one, lambda: claim_unless_held(one, "mine", True)) is None
    assert [[c.id for c in held] for held in attempts] == [[], [], ["theirs"]]
    assert one.claim_rows() == [claim("theirs", 1, NOW + 60, target)]
    assert one.bump("token") == 2  # the lost block's token was never handed out
    one.close()
    other.close()


@etcd_only
@pytest.mark.parametrize("meanwhile", ["drop_claim", "drop_waiter", "settle_waiter"])
def test_a_change_of_the_table_meanwhile_fails_a_block_that_read_it(
    cluster: Cluster, prefix: bytes, meanwhile: str
) -> None:
    one, other = etcd_on(cluster, prefix), etcd_on(cluster, prefix)
    one.put_claim(claim("c1", 1, NOW + 60))
    one.put_waiter(waiter("w1", 1))
    changes: dict[str, Callable[[], None]] = {
        "drop_claim": lambda: other.drop_claim("c1"),  # deletions: seen by the range's marker
        "drop_waiter": lambda: other.drop_waiter("w1"),
        "settle_waiter": lambda: other.settle_waiter("w1", "granted"),
    }
    change = changes[meanwhile]

    def queue_behind_what_it_read() -> None:
        with one.writing():
            assert one.claim_table() == ([claim("c1", 1, NOW + 60)], [waiter("w1", 1)])
            change()
            one.put_waiter(waiter("w2", 2))  # queued behind a table that changed

    with pytest.raises(StoreRetry):
        queue_behind_what_it_read()
    assert all(w.request.id != "w2" for w in one.waiter_rows())
    one.close()
    other.close()


# -- claims ended by etcd's leases (issue 22 item 6) -------------------------------------------


def _lease_of(store: EtcdStore, claim_id: str) -> int:
    _, found = store.gateway.range(store._key("lease", "claim", claim_id))
    return found[0].lease if found else 0


@etcd_only
def test_a_claims_key_is_held_by_an_etcd_lease_of_exactly_its_ttl(
    cluster: Cluster, prefix: bytes
) -> None:
    store = etcd_on(cluster, prefix)
    with store.writing():
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 30))
    lease = _lease_of(store, "c1")
    assert lease != 0
    assert 29 <= store.gateway.time_to_live(lease) <= 30
    with store.writing():  # a renewal for the same TTL: a keep-alive of the same lease
        assert store.claim_time(FakeClock(NOW + 5)) == NOW + 5
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 35))
    assert _lease_of(store, "c1") == lease
    with store.writing():  # a shorter one: a new lease, the old one revoked
        store.claim_time(FakeClock(NOW + 5))
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 15))
    shorter = _lease_of(store, "c1")
    assert shorter not in (0, lease)
    assert 9 <= store.gateway.time_to_live(shorter) <= 10
    assert store.gateway.time_to_live(lease) == -1
    with store.writing():
        store.claim_table()
        store.drop_claim("c1")
    assert store.gateway.time_to_live(shorter) == -1  # released: revoked
    assert store.claim_table() == ([], [])  # its grant went too
    store.close()


def _until_ended(store: EtcdStore, claim_id: str, within: float) -> Claim:
    deadline = time.monotonic() + within
    while (found := store.claim_row(claim_id)) is not None and found.alive:
        assert time.monotonic() < deadline, "the claim outlived its lease"
        time.sleep(0.1)
    assert found is not None, "its grant went with it"
    return found


@etcd_only
def test_a_claim_is_live_while_etcd_keeps_its_key_whatever_any_clock_says(
    cluster: Cluster, prefix: bytes
) -> None:
    """A machine a minute ahead (or behind) cannot end a claim early (or keep it late): the
    claim's lease, on etcd's clock, is the judge; then its grant is an expired claim, left for
    a sweep, with no memkeeper left to run one if need be (a fleet whose every machine died)."""
    store = etcd_on(cluster, prefix)
    with store.writing():
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 1))
    for now in (NOW + 60, NOW + 3600):
        assert store.any_live_claim(functools.partial(float, now)) is True
        assert store.claim_rows(expired_by=now) == []
        assert store.earliest_expiry(now) == now + 1.0  # look again soon: etcd decides
    store.close()
    reader = etcd_on(cluster, prefix)
    ended = _until_ended(reader, "c1", 1 + 3)
    assert ended == claim("c1", 1, NOW + 1)
    for now in (NOW - 60, NOW):
        assert reader.any_live_claim(functools.partial(float, now)) is False
        assert reader.claim_rows(expired_by=now) == [ended]
        assert reader.earliest_expiry(now) == now  # due: sweep it
    reader.drop_claim("c1")
    assert reader.claim_table() == ([], [])
    reader.close()


@etcd_only
def test_a_write_that_read_a_claim_fails_its_commit_once_etcd_ends_the_claim(
    cluster: Cluster, prefix: bytes
) -> None:
    """Issue 22 item 8 on etcd: a fenced write's block read its claim live; the claim's lease
    runs out before the block commits: the commit fails (the write is judged again)."""
    store = etcd_on(cluster, prefix)
    store.put_claim(claim("c1", 1, NOW + 1))

    def stalled_write() -> None:
        with store.writing():
            found = store.claim_row("c1")
            assert found is not None
            assert found.alive
            _until_ended(etcd_on(cluster, prefix), "c1", 1 + 3)  # the write stalls meanwhile
            store.put_waiter(waiter("w1", 1))  # what the write writes

    with pytest.raises(StoreRetry):
        stalled_write()
    assert store.waiter_rows() == []
    store.close()
