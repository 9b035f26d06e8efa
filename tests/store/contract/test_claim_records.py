"""The contract of claim records (``claims.lifecycle``) on both stores: put, read back,
replaced by a later revision, listed by state, kept apart from the live claims; a claim's and
a waiter's plan round-trip with their rows."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

from memkeeper.claims import lifecycle as life
from memkeeper.claims.plan import Plan
from tests.store.contract.conftest import NOW, claim, waiter

if TYPE_CHECKING:
    from memkeeper.store.protocol import StateStore

PLAN = Plan("feat/retry", "wt", "abc123", ("CLAUDE.md#build",), ("tests/test_retry.py",))


def test_a_record_round_trips_and_a_later_revision_replaces_it(store: StateStore) -> None:
    first = life.open_record(claim("c1", 1, NOW + 60), PLAN, "2026-12-06T00:00:00Z")
    with store.writing():
        store.put_claim_record(first)
    assert store.claim_record("c1") == first
    ended = life.move(first, "abandoned", at="2026-12-06T00:01:00Z", by="agent-a", ended_at=NOW)
    with store.writing():
        store.put_claim_record(ended)
    assert store.claim_record("c1") == ended
    assert store.claim_record("c2") is None


def test_records_are_listed_by_state_oldest_first_and_stay_out_of_the_live_set(
    store: StateStore,
) -> None:
    a = life.open_record(claim("c1", 1, NOW + 60), PLAN, "2026-12-06T00:00:01Z")
    b = life.open_record(claim("c2", 2, NOW + 60), Plan(), "2026-12-06T00:00:02Z")
    done = life.move(b, "completed", at="t", by="agent-a", ended_at=NOW)
    with store.writing():
        store.put_claim_record(done)
        store.put_claim_record(a)
    assert store.claim_records() == [a, done]
    assert store.claim_records(("completed",)) == [done]
    assert store.claim_records(("active", "suspended")) == [a]
    assert store.claim_rows() == []


def test_a_record_listed_by_state_is_in_its_latest_state_alone(store: StateStore) -> None:
    """(etcd: the index by state follows every change, and an added record is in it.)"""
    first = life.open_record(claim("c1", 1, NOW + 60), PLAN, "2026-12-06T00:00:01Z")
    with store.writing():
        store.put_claim_record(first)
    moved = life.move(first, "suspended", at="t1", by="agent-a", ended_at=None)
    with store.writing():
        store.put_claim_record(moved)
    back = life.move(moved, "abandoned", at="t2", by="agent-a", ended_at=NOW)
    with store.writing():
        store.put_claim_record(back)
    other = life.open_record(claim("c2", 2, NOW + 60), Plan(), "2026-12-06T00:00:02Z")
    body = json.dumps(life.move(other, "released", at="t", by="b", ended_at=NOW).to_json())
    with store.writing():
        assert store.add_claim_record("c2", "released", "agent-b", 2, body)
    assert store.claim_records(("active", "suspended")) == []
    assert [r.id for r in store.claim_records(("abandoned",))] == ["c1"]
    assert [r.id for r in store.claim_records(("released", "abandoned"))] == ["c1", "c2"]
    assert [r.id for r in store.claim_records(("released", "released"))] == ["c2"]


def test_a_claim_keeps_its_plan_in_its_row(store: StateStore) -> None:
    with store.writing():
        store.put_claim(replace(claim("c1", 1, NOW + 60), plan=PLAN))
        store.put_claim(claim("c2", 2, NOW + 60))
    assert [c.plan for c in store.claim_rows()] == [PLAN, None]
    assert store.claim_table()[0][0].plan == PLAN
    found = store.claim_row("c1")
    assert found is not None
    assert found.plan == PLAN


def test_a_queued_request_keeps_its_plan(store: StateStore) -> None:
    row = waiter("c5", 5)
    row = row._replace(request=replace(row.request, plan=PLAN))
    with store.writing():
        store.put_waiter(row)
    assert store.waiter_rows()[0].request.plan == PLAN
    assert store.claim_table()[1][0].request.plan == PLAN


def test_a_record_is_added_once_and_never_over_a_stored_one(store: StateStore) -> None:
    """A release or an expiry adds its record without reading first (``add_claim_record``):
    written where none is stored, refused — nothing changed — where one is."""
    first = life.open_record(claim("c1", 1, NOW + 60), PLAN, "2026-12-06T00:00:00Z")
    ended = life.move(first, "released", at="2026-12-06T00:01:00Z", by="agent-a", ended_at=NOW)
    body = json.dumps(ended.to_json())
    with store.writing():
        assert store.add_claim_record("c1", "released", "agent-a", 2, body)
        assert not store.add_claim_record("c1", "expired", "agent-a", 2, body.replace("d", "x"))
    assert store.claim_record("c1") == ended
    assert store.claim_records(("released",)) == [ended]
    assert store.claim_records(("expired",)) == []
