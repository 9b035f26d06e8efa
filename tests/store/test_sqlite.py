from __future__ import annotations

import multiprocessing
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper import events as ev
from memkeeper.errors import EnvironmentFailure
from memkeeper.records import FileState, SectionRow
from memkeeper.store.sqlite import SCHEMA_VERSION, Store


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / ".memkeeper"


@pytest.fixture
def store(home: Path) -> Iterator[Store]:
    opened = Store.open(str(home))
    yield opened
    opened.close()


@pytest.fixture
def other(home: Path, store: Store) -> Iterator[Store]:
    """A second connection to the same store, as another process would have."""
    opened = Store.open(str(home))
    yield opened
    opened.close()


def pragma(store: Store, name: str) -> object:
    return store._db.execute(f"PRAGMA {name}").fetchone()[0]


def raw_sql(home: Path, sql: str) -> None:
    db = sqlite3.connect(home / "state.db")
    try:
        db.execute(sql)
        db.commit()
    finally:
        db.close()


def row(key: str, ord_: int, *, present: bool = True, body: bytes = b"body\n") -> SectionRow:
    heading = f"## {key}\n".encode()
    return SectionRow(
        key=key,
        ord=ord_,
        rev=1,
        hash=ev.digest(heading + body) if present else None,
        present=present,
        title=key,
        level=2,
        base=key.rsplit("/", 1)[-1],
        heading=heading,
        body=body,
        lines=2,
    )


def add_event(store: Store, n: int, actor: str = "a") -> None:
    with store.writing():
        store.append_event(ev.iso_utc(n), actor, "emit", None, None, {"n": n})


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
    assert pragma(store, "busy_timeout") == 60_000
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

    with store.writing(), pytest.raises(EnvironmentFailure, match="cannot begin"):
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


# -- files and sections ---------------------------------------------------------------------


def test_put_file_inserts_then_updates(store: Store) -> None:
    assert store.file_state("a.md") is None
    with store.writing():
        store.put_file("a.md", FileState(1, "sha256:a"))
        store.put_file("b.md", FileState(1, "sha256:b"))
        store.put_file("a.md", FileState(2, "sha256:c"))
    assert store.file_state("a.md") == FileState(2, "sha256:c")
    assert store.indexed_paths() == ["a.md", "b.md"]


@pytest.fixture
def indexed(store: Store) -> Store:
    """``a.md`` with present sections a (ord 0), b/c (ord 1), d (ord 2) and an absent ``gone``."""
    with store.writing():
        store.put_file("a.md", FileState(4, "sha256:file"))
        store.put_sections(
            "a.md",
            [
                row("d", 2, body=b"dddd\n"),
                row("a", 0, body=b""),
                row("gone", 1, present=False),
                row("b/c", 1, body=b"cc\n"),
            ],
        )
        store.put_sections("other.md", [row("a", 0, body=b"elsewhere\n")])
    return store


def test_sections_lists_present_rows_in_document_order(indexed: Store) -> None:
    assert [s.key for s in indexed.sections("a.md")] == ["a", "b/c", "d"]
    assert indexed.sections("a.md")[1] == row("b/c", 1, body=b"cc\n")


def test_sections_with_absent_lists_absent_rows_last(indexed: Store) -> None:
    listed = indexed.sections("a.md", with_absent=True)
    assert [(s.key, s.present, s.hash) for s in listed][-1] == ("gone", False, None)
    assert [s.key for s in listed] == ["a", "b/c", "d", "gone"]


def test_section_keys_gives_key_and_base_of_present_sections(indexed: Store) -> None:
    assert indexed.section_keys("a.md") == [("a", "a"), ("b/c", "c"), ("d", "d")]
    assert indexed.section_keys("missing.md") == []


def test_indexed_section_reads_the_file_state_with_the_section(indexed: Store) -> None:
    found = indexed.indexed_section("a.md", "b/c")
    assert found == (FileState(4, "sha256:file"), row("b/c", 1, body=b"cc\n"))
    assert isinstance(found[1].heading, bytes)


def test_indexed_section_is_none_for_absent_unknown_or_unindexed(indexed: Store) -> None:
    assert indexed.indexed_section("a.md", "gone") is None
    assert indexed.indexed_section("a.md", "nope") is None
    assert indexed.indexed_section("other.md", "a") is None  # no files row


def test_put_sections_replaces_a_row_by_key(indexed: Store) -> None:
    with indexed.writing():
        indexed.put_sections("a.md", [row("gone", 3, body=b"back\n")._replace(rev=2)])
    back = indexed.indexed_section("a.md", "gone")
    assert back is not None
    assert (back[1].rev, back[1].body, back[1].present) == (2, b"back\n", True)


def test_splice_context_sums_present_sections_before_an_ord(indexed: Store) -> None:
    heading = len(b"## a\n")
    assert indexed.splice_context("a.md", 0)[0] == 0
    assert indexed.splice_context("a.md", 1)[0] == heading
    assert indexed.splice_context("a.md", 2)[0] == heading + len(b"## b/c\ncc\n")
    assert indexed.splice_context("a.md", 99) == (heading + len(b"## b/c\ncc\n## d\ndddd\n"), None)
    assert indexed.splice_context("missing.md", 5) == (0, None)


# -- events ---------------------------------------------------------------------------------


def test_append_event_chains_each_event_to_the_last(store: Store) -> None:
    assert store.last_event() is None
    for n in range(3):
        add_event(store, n)
    stored = store.events()
    assert [e.id for e in stored] == [1, 2, 3]
    assert stored[0].prev == ev.GENESIS
    assert [e.prev for e in stored[1:]] == [e.hash for e in stored[:2]]
    assert ev.chain_breaks(stored) == []
    assert store.last_event() == stored[-1]


def test_append_event_returns_what_is_stored(store: Store) -> None:
    data = {"z": [1, 2], "a": {"nested": "ünïcode"}, "none": None}
    with store.writing():
        made = store.append_event(
            "2026-01-01T00:00:00.000Z", "agent-a", "section.patched", "CLAUDE.md", "build", data
        )
    assert store.events() == [made]
    assert made.data == data


def test_events_pages_by_since_and_limit(store: Store) -> None:
    for n in range(5):
        add_event(store, n)
    assert [e.id for e in store.events(since=2)] == [3, 4, 5]
    assert [e.id for e in store.events(since=1, limit=2)] == [2, 3]
    assert store.events(since=5) == []


def test_an_edit_of_the_stored_log_breaks_the_chain(home: Path, store: Store) -> None:
    for n in range(3):
        add_event(store, n)
    raw_sql(home, "UPDATE events SET actor = 'mallory' WHERE id = 2")
    assert [event_id for event_id, _ in ev.chain_breaks(store.events())] == [2]


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


# -- concurrency ----------------------------------------------------------------------------

WRITERS, EACH = 4, 50


def append_many(home: str, actor: str, start: multiprocessing.synchronize.Barrier) -> None:
    store = Store.open(home)
    start.wait()
    try:
        for n in range(EACH):
            with store.writing():
                store.append_event(ev.iso_utc(n), actor, "emit", None, None, {"n": n})
    finally:
        store.close()


def test_concurrent_writers_lose_no_event_and_keep_the_chain(home: Path, store: Store) -> None:
    context = multiprocessing.get_context("fork")
    start = context.Barrier(WRITERS)
    workers = [
        context.Process(target=append_many, args=(str(home), f"w{i}", start))
        for i in range(WRITERS)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0] * WRITERS
    stored = store.events()
    assert [e.id for e in stored] == list(range(1, WRITERS * EACH + 1))
    assert ev.chain_breaks(stored) == []
    for i in range(WRITERS):
        mine = [e.data["n"] for e in stored if e.actor == f"w{i}"]
        assert mine == list(range(EACH))


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


def open_and_append(home: str, actor: str, start: multiprocessing.synchronize.Barrier) -> None:
    start.wait()
    store = Store.open(home)  # all at once, on a home that does not exist yet
    try:
        with store.writing():
            store.append_event(ev.iso_utc(0), actor, "emit", None, None, {})
    finally:
        store.close()


@pytest.mark.parametrize("round_", range(5))
def test_processes_creating_the_store_at_once_all_succeed(tmp_path: Path, round_: int) -> None:
    home = str(tmp_path / "fresh" / ".memkeeper")
    os.makedirs(os.path.dirname(home))
    context = multiprocessing.get_context("fork")
    start = context.Barrier(12)
    workers = [
        context.Process(target=open_and_append, args=(home, f"w{i:02}", start)) for i in range(12)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0] * 12
    store = Store.open(home)
    try:
        assert sorted(e.actor for e in store.events()) == [f"w{i:02}" for i in range(12)]
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
