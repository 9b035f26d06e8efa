"""The SQLite store's schema version: a store of a newer memkeeper is refused (exit 1, saying
what to do) without leaking its connection; an older one is upgraded in place, keeping its
data."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure
from memkeeper.records import FileState
from memkeeper.store.sqlite import Store
from memkeeper.store.sqlite.schema import SCHEMA_VERSION
from tests.store.sqlite.conftest import pragma, raw_sql


def test_a_store_from_a_newer_memkeeper_is_refused(home: Path) -> None:
    Store.open(str(home)).close()
    raw_sql(home, f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(
        EnvironmentFailure,
        match=rf"version {SCHEMA_VERSION + 1}.*knows "
        rf"{SCHEMA_VERSION}",
    ) as caught:
        Store.open(str(home))
    assert caught.value.exit_code == 1


def test_a_version_1_store_is_upgraded_in_place_keeping_its_data(home: Path) -> None:
    store = Store.open(str(home))
    with store.writing():
        store.put_file("a.md", FileState(3, "sha256:x"))
    store.close()
    for table in ("claims", "waiters", "counters", "tallies", "reconciliations"):
        raw_sql(home, f"DROP TABLE {table}")
    raw_sql(home, "PRAGMA user_version=1")
    upgraded = Store.open(str(home))
    try:
        assert pragma(upgraded, "user_version") == SCHEMA_VERSION
        assert upgraded.file_state("a.md") == FileState(3, "sha256:x")
        assert upgraded.claim_rows() == []
    finally:
        upgraded.close()


def test_a_refused_store_does_not_leak_its_connection(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store.open(str(home)).close()
    raw_sql(home, f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    opened: list[sqlite3.Connection] = []
    real_connect = sqlite3.connect

    def recording_connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        connection = real_connect(*args, **kwargs)  # type: ignore[call-overload]
        opened.append(connection)
        return connection  # type: ignore[no-any-return]

    monkeypatch.setattr(sqlite3, "connect", recording_connect)
    with pytest.raises(EnvironmentFailure):
        Store.open(str(home))
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        opened[0].execute("SELECT 1")


def test_a_version_7_store_gets_plans_and_records_and_keeps_its_claims(home: Path) -> None:
    from memkeeper.claims.decisions import Claim

    store = Store.open(str(home))
    claim = Claim("c1", 4, "agent-a", "write", ("src/",), 0, False, 100.0, 9e9, "fix it")
    with store.writing():
        store.put_claim(claim)
    store.close()
    columns = "id, token, agent, mode, targets, priority, strict, granted_at, expires_at, objective"
    waiters = (
        "id, arrival, agent, mode, targets, priority, strict, ttl, objective, pid, deadline, "
        "state, reason"
    )
    for statement in (
        "DROP TABLE claim_records",
        f"CREATE TABLE c2 AS SELECT {columns} FROM claims",
        "DROP TABLE claims",
        "ALTER TABLE c2 RENAME TO claims",
        f"CREATE TABLE w2 AS SELECT {waiters} FROM waiters",
        "DROP TABLE waiters",
        "ALTER TABLE w2 RENAME TO waiters",
        "PRAGMA user_version=7",
    ):
        raw_sql(home, statement)
    upgraded = Store.open(str(home))
    try:
        assert pragma(upgraded, "user_version") == SCHEMA_VERSION
        assert upgraded.claim_rows() == [claim]
        assert upgraded.claim_rows()[0].plan is None
        assert upgraded.claim_record("c1") is None  # written at its first change
        assert upgraded.claim_records() == []
        assert upgraded.waiter_rows() == []
    finally:
        upgraded.close()


def test_a_version_12_store_drops_its_copies_of_current_bodies_and_keeps_the_rest(
    home: Path,
) -> None:
    from memkeeper import events as ev
    from memkeeper.records import SectionRow

    def at(rev: int, body: bytes, *, key: str = "a", present: bool = True) -> SectionRow:
        heading = f"# {key}\n".encode()
        hash_ = ev.digest(heading + body) if present else None
        return SectionRow(key, 0, rev, hash_, present, key, 1, key, heading, body, 2)

    store = Store.open(str(home))
    with store.writing():  # as schema 12 left them: every body kept, the current one too
        store.put_sections("m.md", [at(1, b"one\n"), at(2, b"bee\n", key="b")])
        store.put_sections("m.md", [at(2, b"two\n")])
        store.keep_bodies("m.md", store.sections("m.md"))
        store.put_sections("gone.md", [at(3, b"three\n")])
        store.keep_bodies("gone.md", [at(3, b"three\n")])
        store.put_sections("gone.md", [at(3, b"", present=False)])
    before = raw_rows(home, "SELECT path, key, rev FROM bodies ORDER BY 1, 2, 3")
    assert before == [("gone.md", "a", 3), ("m.md", "a", 1), ("m.md", "a", 2), ("m.md", "b", 2)]
    store.close()
    raw_sql(home, "PRAGMA user_version=12")
    upgraded = Store.open(str(home))
    try:
        assert pragma(upgraded, "user_version") == SCHEMA_VERSION
        kept = raw_rows(home, "SELECT path, key, rev FROM bodies ORDER BY 1, 2, 3")
        assert kept == [("gone.md", "a", 3), ("m.md", "a", 1)]  # not the rows' own
        answers = [("m.md", "a", 1), ("m.md", "a", 2), ("m.md", "b", 2), ("gone.md", "a", 3)]
        assert [upgraded.body_at(*at_) for at_ in answers] == [
            b"one\n",
            b"two\n",
            b"bee\n",
            b"three\n",
        ]
        with upgraded.writing():  # and it works on: moving on archives the current body
            upgraded.put_sections("m.md", [at(3, b"three\n")])
        assert upgraded.body_at("m.md", "a", 2) == b"two\n"
        assert upgraded.body_at("m.md", "a", 3) == b"three\n"
    finally:
        upgraded.close()


def raw_rows(home: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(home / "state.db")
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()
