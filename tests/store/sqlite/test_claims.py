"""What only SQLite's lease tables promise: a counter survives reopening the store, and two
connections never get the same value. Everything else the lease tables do is asserted on both
backends by tests/store/contract/test_claims.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.claims.decisions import Claim, Request
from memkeeper.claims.waiters import WaiterRow
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
