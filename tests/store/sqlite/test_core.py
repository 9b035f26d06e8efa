"""The SQLite store's core: the memory home it creates, its connection's settings (WAL, the
log synced by walsync, a busy timeout), its transactions (``BEGIN IMMEDIATE``, rolled back
whole, a snapshot for reads), the small cache, trimming the log, and the change signal the
dashboard polls. Processes opening a new store at once: tests/e2e/test_store_processes.py."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure
from memkeeper.records import FileState
from memkeeper.store.sqlite import Store, core
from memkeeper.store.sqlite.schema import SCHEMA_VERSION
from tests.store.sqlite.conftest import pragma, raw_sql

# -- the memory home and its settings --------------------------------------------------------


def test_opening_creates_the_home_with_a_gitignore_of_everything(home: Path, store: Store) -> None:
    assert (home / ".gitignore").read_text() == "*\n"
    assert (home / "locks").is_dir()
    assert (home / "state.db").is_file()


def test_an_existing_gitignore_is_left_alone(home: Path) -> None:
    home.mkdir()
    (home / ".gitignore").write_text("*\n!keep\n")
    Store.open(str(home)).close()
    assert (home / ".gitignore").read_text() == "*\n!keep\n"


def test_the_store_runs_in_wal_with_its_own_log_sync_and_a_busy_timeout(store: Store) -> None:
    assert pragma(store, "journal_mode") == "wal"
    assert pragma(store, "synchronous") == 1  # NORMAL: a durable commit syncs through walsync
    assert pragma(store, "busy_timeout") == 10_000
    assert pragma(store, "user_version") == SCHEMA_VERSION


def test_a_reopened_store_keeps_its_data_and_settings(home: Path, store: Store) -> None:
    with store.writing():
        store.put_file("a.md", FileState(3, "sha256:x"))
    store.close()
    again = Store.open(str(home))
    try:
        assert again.file_state("a.md") == FileState(3, "sha256:x")
        assert pragma(again, "journal_mode") == "wal"
        assert pragma(again, "synchronous") == 1
    finally:
        again.close()


# -- transactions ---------------------------------------------------------------------------


def test_writing_commits_when_the_block_succeeds(store: Store, other: Store) -> None:
    with store.writing():
        store.put_file("a.md", FileState(1, "sha256:a"))
    assert other.file_state("a.md") == FileState(1, "sha256:a")


def test_writing_rolls_back_when_the_block_raises(store: Store, other: Store) -> None:
    def fail_halfway() -> None:
        with store.writing():
            store.put_file("a.md", FileState(1, "sha256:a"))
            store.append_event("t", "a", "emit", None, None, {})
            raise RuntimeError

    with pytest.raises(RuntimeError):
        fail_halfway()
    assert store.file_state("a.md") is None
    assert other.events() == []
    with store.writing():  # and the connection is usable again
        store.put_file("a.md", FileState(2, "sha256:b"))
    assert other.file_state("a.md") == FileState(2, "sha256:b")


def test_writing_holds_the_write_lock_from_the_start(store: Store, other: Store) -> None:
    other._db.execute("PRAGMA busy_timeout=0")

    def begin_elsewhere() -> None:
        with other.writing():
            pass  # pragma: no cover - BEGIN IMMEDIATE fails before the body runs

    with store.writing(), pytest.raises(EnvironmentFailure, match="write lock"):
        begin_elsewhere()
    with other.writing():
        other.put_file("b.md", FileState(1, "sha256:b"))


def test_an_error_that_sqlite_already_rolled_back_is_reported_as_itself(
    home: Path, store: Store
) -> None:
    raw_sql(
        home,
        "CREATE TRIGGER refuse BEFORE INSERT ON cache "
        "BEGIN SELECT RAISE(ROLLBACK, 'refused by trigger'); END",
    )
    with pytest.raises(sqlite3.IntegrityError, match="refused by trigger"), store.writing():
        store.cache("k", "v")
    assert not store._db.in_transaction


def test_reading_sees_one_snapshot(store: Store, other: Store) -> None:
    with store.writing():
        store.put_file("a.md", FileState(1, "sha256:a"))
    with store.reading():
        assert store.file_state("a.md") == FileState(1, "sha256:a")
        with other.writing():
            other.put_file("a.md", FileState(2, "sha256:b"))
        assert store.file_state("a.md") == FileState(1, "sha256:a")
    assert store.file_state("a.md") == FileState(2, "sha256:b")


def test_a_write_that_waits_out_the_busy_timeout_is_store_busy_naming_the_holder(
    home: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22 item 8: a writer stopped while it holds the write lock (SIGSTOP, a debugger)
    keeps every other waiting; they give up after the busy timeout as ``store_busy``, naming
    the holder and what to do — before, after 60 s, "cannot begin a transaction: database is
    locked" with no reason and no holder. The same against a stopped process:
    tests/e2e/test_store_busy.py."""
    monkeypatch.setattr(core, "BUSY_TIMEOUT_S", 0.2)
    waiting = Store.open(str(home))
    with store.writing():
        store.cache("held", "yes")
        with pytest.raises(EnvironmentFailure) as caught, waiting.writing():
            waiting.cache("late", "no")
    waiting.close()
    assert caught.value.fields["reason"] == "store_busy"
    assert caught.value.fields["holder"] == os.getpid()  # the kernel lists this process
    assert f"process {os.getpid()} (" in caught.value.message
    assert "held the state store's write lock for over 0.2 s" in caught.value.message
    assert "nothing was changed" in caught.value.message
    assert store.cached("held") == "yes"
    assert store.cached("late") is None


# -- cache ----------------------------------------------------------------------------------


def test_cache_outside_a_transaction_commits_on_its_own(store: Store, other: Store) -> None:
    assert store.cached("k") is None
    store.cache("k", "v1")
    store.cache("k", "v2")
    assert other.cached("k") == "v2"


def test_cache_inside_a_transaction_joins_it(store: Store, other: Store) -> None:
    def fail_after_caching() -> None:
        with store.writing():
            store.cache("k", "v")
            raise RuntimeError

    with pytest.raises(RuntimeError):
        fail_after_caching()
    assert store.cached("k") is None
    with store.writing():
        store.cache("k", "v")
    assert other.cached("k") == "v"


# -- the log, many processes, the change signal ---------------------------------------------


def test_trim_log_folds_a_large_write_ahead_log_back_and_truncates_it(home: Path) -> None:
    store = Store.open(str(home))
    try:
        for n in range(200):
            with store.writing():
                store.append_event("2026-01-01T00:00:00.000Z", "a", "t", None, None, {"n": n})
        wal = home / "state.db-wal"
        grown = wal.stat().st_size
        assert grown > 64 * 1024
        store.trim_log(limit=grown)  # not past the limit: left alone
        assert wal.stat().st_size == grown
        store.trim_log(limit=64 * 1024)
        assert wal.stat().st_size == 0
        assert len(store.events()) == 200
    finally:
        store.close()


def test_data_version_moves_with_another_connections_commit(home: Path, store: Store) -> None:
    """The dashboard's change signal: SQLite counts the commits of other connections."""
    before = store.data_version()
    other = Store.open(str(home))
    try:
        with other.writing():
            other.put_file("a.md", FileState(1, "sha256:a"))
    finally:
        other.close()
    assert store.data_version() > before


# -- a lost store is never replaced by a fresh one silently --------------------------------------


def lost(home: Path) -> str:
    with pytest.raises(EnvironmentFailure) as caught:
        Store.open(str(home)).close()
    assert caught.value.fields["reason"] == "store_lost"
    return caught.value.message


def test_a_new_store_names_itself_in_the_database_and_beside_it(home: Path, store: Store) -> None:
    mark = (home / "store-id").read_text().strip()
    assert len(mark) == 32
    assert store.cached("store:id") == mark
    Store.open(str(home)).close()
    assert (home / "store-id").read_text().strip() == mark


@pytest.mark.parametrize("damage", ["emptied", "deleted"])
def test_a_database_emptied_or_deleted_is_a_lost_store_and_nothing_is_made(
    home: Path, store: Store, damage: str
) -> None:
    store.close()
    db = home / "state.db"
    db.write_bytes(b"") if damage == "emptied" else db.unlink()
    assert "is lost, with its revisions, live claims and fencing tokens" in lost(home)
    assert db.exists() == (damage == "emptied")
    assert not db.exists() or db.stat().st_size == 0


def test_a_database_made_afresh_over_the_lost_one_is_told_apart(home: Path, store: Store) -> None:
    store.close()
    for name in ("state.db", "state.db-wal", "state.db-shm"):
        (home / name).unlink(missing_ok=True)
    mark = (home / "store-id").read_bytes()
    (home / "store-id").unlink()
    Store.open(str(home)).close()
    (home / "store-id").write_bytes(mark)
    assert "holds another store than the one this home had" in lost(home)


def test_a_deleted_write_ahead_log_is_a_lost_store(home: Path, store: Store) -> None:
    with store.writing():
        store.bump("token")
    # The process that wrote it is still running (a daemon), or exited without a checkpoint.
    (home / "state.db-wal").unlink()
    assert "lost its write-ahead log" in lost(home)


def test_a_store_an_older_memkeeper_made_is_adopted(home: Path, store: Store) -> None:
    store.close()
    raw_sql(home, "DELETE FROM cache WHERE key = 'store:id'")
    (home / "store-id").unlink()
    again = Store.open(str(home))
    try:
        assert again.cached("store:id") == (home / "store-id").read_text().strip()
    finally:
        again.close()
