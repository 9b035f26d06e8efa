"""What only SQLite's lease tables promise: a counter survives reopening the store, and two
connections never get the same value; claims are judged by one clock for every process, the
machine's uptime from the boot's epoch, and a new boot ends the claims of the last one.
Everything else the lease tables do is asserted on both backends by
tests/store/contract/test_claims.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.claims.decisions import Claim, Request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.clock import FakeClock
from memkeeper.store.sqlite import Store

NOW = 1_700_000_000.0


@pytest.fixture
def home(tmp_path: Path) -> str:
    return str(tmp_path / ".memkeeper")


@pytest.fixture
def store(home: str) -> Iterator[Store]:
    opened = Store.open(home)
    yield opened
    opened.close()


def claim(id: str, token: int, expires_at: float) -> Claim:
    targets = ("src/api/", "CLAUDE.md#inventory-service/build")
    return Claim(id, token, "agent-a", "write", targets, 0, False, NOW, expires_at, "")


def waiter(id: str, arrival: int) -> WaiterRow:
    request = Request(id, "agent-b", "read", ("docs/",), 5, True, 90.0, "review", arrival)
    return WaiterRow(request, 4242, NOW + 30, "waiting", None)


# -- counters ---------------------------------------------------------------------------------


def test_a_counter_survives_reopening_the_store(home: str, store: Store) -> None:
    with store.writing():
        store.bump("token")
    store.close()
    again = Store.open(home)
    try:
        with again.writing():
            assert again.bump("token") == 2
    finally:
        again.close()


def test_two_connections_never_get_the_same_value(home: str, store: Store) -> None:
    other = Store.open(home)
    try:
        seen = []
        for connection in (store, other, store, other):
            with connection.writing():
                seen.append(connection.bump("token"))
    finally:
        other.close()
    assert seen == [1, 2, 3, 4]


# -- the claims' clock (issue 22 item 6) --------------------------------------------------------
# SQLite judges a claim by the time it is given (etcd by the claim's lease: the contract).


def test_claim_rows_expired_by_a_time_lists_only_those_due(store: Store) -> None:
    with store.writing():
        store.put_claim(claim("due", 1, NOW))
        store.put_claim(claim("live", 2, NOW + 60))
        store.put_claim(claim("long-due", 3, NOW - 600))
    assert [c.id for c in store.claim_rows(expired_by=NOW)] == ["due", "long-due"]
    assert len(store.claim_rows()) == 3  # expired ones stay until swept


def test_any_live_claim_counts_a_claim_until_its_expiry(store: Store) -> None:
    assert store.any_live_claim(lambda: NOW) is False
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
    assert store.any_live_claim(lambda: NOW) is True
    assert store.any_live_claim(lambda: NOW + 59.9) is True
    assert store.any_live_claim(lambda: NOW + 60) is False


def test_earliest_expiry_is_the_soonest_live_one(store: Store) -> None:
    assert store.earliest_expiry(NOW) is None
    with store.writing():
        store.put_claim(claim("late", 1, NOW + 300))
        store.put_claim(claim("soon", 2, NOW + 30))
        store.put_claim(claim("past", 3, NOW - 1))
    assert store.earliest_expiry(NOW) == NOW + 30
    assert store.earliest_expiry(NOW + 30) == NOW + 300
    assert store.earliest_expiry(NOW + 300) is None


def test_every_connection_reads_one_claims_time_whatever_its_wall_clock(
    home: str, store: Store
) -> None:
    """Two processes of one boot, one with its wall clock a minute ahead, the other a minute
    behind: the same time, the first look's wall clock plus the uptime since."""
    ahead, behind = FakeClock(NOW), FakeClock(NOW)
    assert store.claim_time(ahead) == NOW  # the boot's epoch: NOW at uptime 0
    other = Store.open(home)
    try:
        for clock in (ahead, behind):
            clock.advance(10)
        ahead.set(ahead.now() + 60)
        behind.set(behind.now() - 60)
        assert store.claim_time(ahead) == other.claim_time(behind) == NOW + 10
    finally:
        other.close()


def test_a_new_boot_ends_every_claim_and_wait_of_the_last_one_at_its_first_look(
    store: Store,
) -> None:
    clock = FakeClock(NOW)
    with store.writing():
        assert store.claim_time(clock) == NOW
        store.put_claim(claim("c1", 1, NOW + 600))
        store.put_claim(claim("c2", 2, NOW + 5))
        store.put_waiter(waiter("w1", 1)._replace(deadline=NOW + 600))
        store.put_waiter(waiter("w2", 2))
    clock.advance(10)  # c2 expired; c1 and w1 had minutes to go, w2 20 s
    clock.reboot(down=30)
    first = store.claim_time(clock)  # a transaction of its own
    assert first == NOW + 40
    assert [(c.id, c.expires_at) for c in store.claim_rows()] == [("c1", first), ("c2", NOW + 5)]
    assert [w.deadline for w in store.waiter_rows()] == [first, NOW + 30]
    assert store.any_live_claim(lambda: first) is False
    clock.advance(1)
    assert store.claim_time(clock) == first + 1  # the new boot's epoch, kept


def test_claims_stored_before_the_first_epoch_keep_their_expiry(store: Store) -> None:
    """An upgrade: the first epoch counts from the wall clock, as those claims were dated."""
    store.put_claim(claim("c1", 1, NOW + 600))
    assert store.claim_time(FakeClock(NOW)) == NOW
    assert store.claim_rows() == [claim("c1", 1, NOW + 600)]
    assert store.any_live_claim(lambda: NOW + 599) is True
