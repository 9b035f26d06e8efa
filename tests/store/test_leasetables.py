"""The lease tables of a real store: claims and queued requests round-trip, counters never
repeat a value, tallies forget what is older than an hour, and a waiter's outcome settles."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from memkeeper.leases.decisions import Claim, Request
from memkeeper.leases.waiters import WaiterRow
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


def test_bump_counts_up_from_one(store: Store) -> None:
    with store.writing():
        assert [store.bump("token") for _ in range(3)] == [1, 2, 3]


def test_each_counter_counts_on_its_own(store: Store) -> None:
    with store.writing():
        store.bump("token")
        store.bump("token")
        assert store.bump("arrival") == 1
        assert store.bump("token") == 3


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


# -- claims ----------------------------------------------------------------------------------


def test_a_claim_round_trips_field_for_field(store: Store) -> None:
    stored = replace(claim("c1", 7, NOW + 120), strict=True, priority=3, objective="fix it")
    with store.writing():
        store.put_claim(stored)
    assert store.claim_row("c1") == stored
    assert store.claim_row("nope") is None


def test_claim_rows_come_in_token_order(store: Store) -> None:
    with store.writing():
        for id, token in [("b", 5), ("a", 9), ("c", 1)]:
            store.put_claim(claim(id, token, NOW + 60))
    assert [c.id for c in store.claim_rows()] == ["c", "b", "a"]


def test_claim_rows_expired_by_a_time_lists_only_those_due(store: Store) -> None:
    with store.writing():
        store.put_claim(claim("due", 1, NOW))
        store.put_claim(claim("live", 2, NOW + 60))
        store.put_claim(claim("long-due", 3, NOW - 600))
    assert [c.id for c in store.claim_rows(expired_by=NOW)] == ["due", "long-due"]
    assert len(store.claim_rows()) == 3  # expired ones stay until swept


def test_putting_a_claim_again_replaces_it(store: Store) -> None:
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
        store.put_claim(claim("c1", 1, NOW + 600))
    (only,) = store.claim_rows()
    assert only.expires_at == NOW + 600


def test_a_dropped_claim_is_gone(store: Store) -> None:
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
        store.put_claim(claim("c2", 2, NOW + 60))
        store.drop_claim("c1")
    assert [c.id for c in store.claim_rows()] == ["c2"]


def test_any_live_claim_counts_a_claim_until_its_expiry(store: Store) -> None:
    assert store.any_live_claim(NOW) is False
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
    assert store.any_live_claim(NOW) is True
    assert store.any_live_claim(NOW + 59.9) is True
    assert store.any_live_claim(NOW + 60) is False


def test_earliest_expiry_is_the_soonest_live_one(store: Store) -> None:
    assert store.earliest_expiry(NOW) is None
    with store.writing():
        store.put_claim(claim("late", 1, NOW + 300))
        store.put_claim(claim("soon", 2, NOW + 30))
        store.put_claim(claim("past", 3, NOW - 1))
    assert store.earliest_expiry(NOW) == NOW + 30
    assert store.earliest_expiry(NOW + 30) == NOW + 300
    assert store.earliest_expiry(NOW + 300) is None


def test_a_waiter_round_trips_with_its_request(store: Store) -> None:
    stored = waiter("w1", 1)
    with store.writing():
        store.put_waiter(stored)
    (loaded,) = store.waiter_rows()
    assert loaded == stored
    assert loaded.request.targets == ("docs/",)
    assert loaded.request.strict is True


def test_waiters_come_in_arrival_order(store: Store) -> None:
    with store.writing():
        for id, arrival in [("w3", 3), ("w1", 1), ("w2", 2)]:
            store.put_waiter(waiter(id, arrival))
    assert [w.request.id for w in store.waiter_rows()] == ["w1", "w2", "w3"]


def test_settling_a_waiter_records_its_outcome_and_reason(store: Store) -> None:
    with store.writing():
        store.put_waiter(waiter("w1", 1))
        store.put_waiter(waiter("w2", 2))
        store.settle_waiter("w1", "aborted", "deadlock")
        store.settle_waiter("w2", "granted")
    settled = {w.request.id: (w.state, w.reason) for w in store.waiter_rows()}
    assert settled == {"w1": ("aborted", "deadlock"), "w2": ("granted", None)}


def test_a_dropped_waiter_is_gone(store: Store) -> None:
    with store.writing():
        store.put_waiter(waiter("w1", 1))
        store.drop_waiter("w1")
    assert store.waiter_rows() == []


# -- the whole table in one read ----------------------------------------------------------------


def test_the_lease_table_is_both_tables_in_their_orders(store: Store) -> None:
    assert store.lease_table() == ([], [])
    with store.writing():
        for id, token in [("b", 5), ("a", 9), ("gone", 1)]:
            store.put_claim(claim(id, token, NOW + 60 if id != "gone" else NOW - 1))
        for id, arrival in [("w3", 3), ("w1", 1)]:
            store.put_waiter(waiter(id, arrival))
        store.settle_waiter("w1", "aborted", "deadlock")
    claims, waiters = store.lease_table()
    assert claims == store.claim_rows()  # expired ones too: the caller sweeps them
    assert [c.id for c in claims] == ["gone", "b", "a"]
    assert waiters == store.waiter_rows()
    assert [(w.request.id, w.state, w.reason) for w in waiters] == [
        ("w1", "aborted", "deadlock"),
        ("w3", "waiting", None),
    ]


def test_the_lease_table_with_claims_only_or_waiters_only(store: Store) -> None:
    with store.writing():
        store.put_waiter(waiter("w1", 1))
    assert store.lease_table() == ([], [waiter("w1", 1)])
    with store.writing():
        store.drop_waiter("w1")
        store.put_claim(claim("c1", 1, NOW + 60))
    assert store.lease_table() == ([claim("c1", 1, NOW + 60)], [])


# -- tallies ---------------------------------------------------------------------------------


def test_tally_counts_occurrences_since_a_time(store: Store) -> None:
    with store.writing():
        for at in (NOW, NOW + 10, NOW + 20):
            store.tally("conflict", at)
        store.tally("deadlock", NOW + 5)
    assert store.tally_count("conflict", NOW) == 3
    assert store.tally_count("conflict", NOW + 10) == 2
    assert store.tally_count("conflict", NOW + 21) == 0
    assert store.tally_count("deadlock", 0.0) == 1
    assert store.tally_count("never", 0.0) == 0


def test_a_tally_forgets_its_kinds_entries_older_than_the_window(store: Store) -> None:
    with store.writing():
        store.tally("conflict", NOW)
        store.tally("deadlock", NOW)
        store.tally("conflict", NOW + 3601)
    assert store.tally_count("conflict", 0.0) == 1
    assert store.tally_count("deadlock", 0.0) == 1  # other kinds are left alone


def test_a_tally_keeps_what_is_inside_a_custom_window(store: Store) -> None:
    with store.writing():
        store.tally("conflict", NOW)
        store.tally("conflict", NOW + 50, keep_s=60)
        store.tally("conflict", NOW + 100, keep_s=60)
    assert store.tally_count("conflict", 0.0) == 2
