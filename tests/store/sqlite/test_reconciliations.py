"""The reconciliations table of a real store: one open reconciliation per region, refreshed
rather than duplicated, resolved once, and listed open-only unless asked for all."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.coordination import Reconciliation
from memkeeper.store.sqlite import Store

STATUS = "memory/status.md"
AT = "2026-11-29T13:27:07.120Z"
LATER = "2026-11-29T14:00:00.000Z"


@pytest.fixture
def home(tmp_path: Path) -> str:
    return str(tmp_path / ".memkeeper")


@pytest.fixture
def store(home: str) -> Iterator[Store]:
    opened = Store.open(home)
    yield opened
    opened.close()


def open_one(
    store: Store, region: str = "claims", human: str = "mine\n", path: str = STATUS
) -> tuple[Reconciliation, bool]:
    with store.writing():
        return store.reconciliations.open_reconciliation(
            path, region, human, "generated\n", "agent-a", AT
        )


def resolve(store: Store, rec_id: int, how: str = "keep-human", by: str = "human") -> None:
    with store.writing():
        store.reconciliations.resolve_reconciliation(rec_id, how, by, LATER)


def test_opening_a_reconciliation_stores_every_field(store: Store) -> None:
    rec, opened = open_one(store)
    assert opened is True
    assert rec == Reconciliation(
        rec.id, STATUS, "claims", "mine\n", "generated\n", "agent-a", AT, None, None, None
    )
    assert store.reconciliations.reconciliation(rec.id) == rec
    assert rec.status == "open"


def test_a_second_edit_of_an_open_region_refreshes_its_texts(store: Store) -> None:
    first, _ = open_one(store, human="mine\n")
    again, opened = open_one(store, human="mine, edited again\n")
    assert opened is False
    assert again.id == first.id
    assert again.human == "mine, edited again\n"
    assert store.reconciliations.reconciliation(first.id) == again
    assert len(store.reconciliations.reconciliations()) == 1


def test_each_region_and_file_gets_its_own(store: Store) -> None:
    claims, _ = open_one(store, region="claims")
    events, _ = open_one(store, region="events")
    elsewhere, _ = open_one(store, region="claims", path="docs/status.md")
    assert len({claims.id, events.id, elsewhere.id}) == 3
    assert [r.id for r in store.reconciliations.reconciliations()] == sorted(
        [claims.id, events.id, elsewhere.id]
    )


def test_resolving_records_how_who_and_when(store: Store) -> None:
    rec, _ = open_one(store)
    resolve(store, rec.id, "take-generated", "agent-b")
    done = store.reconciliations.reconciliation(rec.id)
    assert done is not None
    assert (done.resolution, done.resolved_by, done.resolved_at) == (
        "take-generated",
        "agent-b",
        LATER,
    )
    assert done.status == "resolved"


def test_a_resolution_is_never_overwritten(store: Store) -> None:
    rec, _ = open_one(store)
    resolve(store, rec.id, "keep-human", "human")
    resolve(store, rec.id, "take-generated", "agent-b")
    done = store.reconciliations.reconciliation(rec.id)
    assert done is not None
    assert (done.resolution, done.resolved_by) == ("keep-human", "human")


def test_a_resolved_region_opens_a_new_one_on_its_next_edit(store: Store) -> None:
    first, _ = open_one(store)
    resolve(store, first.id)
    second, opened = open_one(store, human="edited once more\n")
    assert opened is True
    assert second.id != first.id
    assert [r.id for r in store.reconciliations.reconciliations()] == [second.id]


def test_resolved_ones_are_listed_only_when_asked_for(store: Store) -> None:
    first, _ = open_one(store, region="claims")
    second, _ = open_one(store, region="events")
    resolve(store, first.id)
    assert [r.id for r in store.reconciliations.reconciliations()] == [second.id]
    everything = store.reconciliations.reconciliations(resolved=True)
    assert [(r.id, r.status) for r in everything] == [(first.id, "resolved"), (second.id, "open")]


def test_an_unknown_id_is_none(store: Store) -> None:
    assert store.reconciliations.reconciliation(99) is None
    assert store.reconciliations.reconciliations(resolved=True) == []


def test_the_store_itself_refuses_two_open_for_one_region(store: Store) -> None:
    rec, _ = open_one(store)
    with pytest.raises(sqlite3.IntegrityError), store.writing():
        store._db.execute(
            "INSERT INTO reconciliations (path, region, human, generated, opened_by, opened_at) "
            "VALUES (?, 'claims', 'x', 'y', 'a', ?)",
            (STATUS, AT),
        )
    assert store.reconciliations.reconciliations() == [rec]


def test_the_json_form_carries_the_status(store: Store) -> None:
    rec, _ = open_one(store)
    assert rec.to_json() == {
        "id": rec.id,
        "path": STATUS,
        "region": "claims",
        "human": "mine\n",
        "generated": "generated\n",
        "opened_by": "agent-a",
        "opened_at": AT,
        "resolution": None,
        "resolved_by": None,
        "resolved_at": None,
        "state": "open",
    }
