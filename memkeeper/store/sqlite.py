"""The state store: revisions, section texts and the event log, in SQLite under ``.memkeeper/``.

The interface is a set of domain operations (no SQL leaves this module), so another backend
can implement the same methods. Every writing operation runs inside ``writing()``, one
``BEGIN IMMEDIATE`` transaction (a deferred read-then-write fails at once with
SQLITE_BUSY_SNAPSHOT); reads that need a consistent snapshot run inside ``reading()``.
WAL mode; a durable commit returns once the log is synced (``store.walsync``: commits with
``synchronous=NORMAL``, then one shared ``fdatasync`` of the log for every commit made before
it — group commit). A successful patch is a promise to an agent.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3

from memkeeper import events as ev
from memkeeper.errors import EnvironmentFailure
from memkeeper.names import LOCKS_DIR, STATE_DB
from memkeeper.records import Event, FileState, SectionRow
from memkeeper.store import walsync
from memkeeper.store.claimtables import ClaimRows
from memkeeper.store.netfs import refuse_network_filesystem
from memkeeper.store.pendingtables import PendingRows
from memkeeper.store.proposaltables import ProposalRows
from memkeeper.store.recontables import ReconciliationRows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any


SCHEMA_VERSION = 5  # 1: files, sections, events, cache; 2: + claims, waiters, counters,
#                     tallies, reconciliations; 3: + bodies, proposals; 4: + events_by_path;
#                     5: + pending (each added by re-running the IF NOT EXISTS schema)
BUSY_TIMEOUT_S = 60.0
WAL_TRIM_BYTES = 1024 * 1024
EVENTS_HEAD = "events:head"  # cache key: "ID HASH" of the last event appended

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    file_rev INTEGER NOT NULL,
    file_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sections (
    path TEXT NOT NULL,
    key TEXT NOT NULL,
    ord INTEGER NOT NULL,          -- position in the file, meaningless when absent
    rev INTEGER NOT NULL,          -- never goes back, even across absence
    hash TEXT,                     -- NULL while the section is absent from the file
    present INTEGER NOT NULL,
    title TEXT NOT NULL,
    level INTEGER NOT NULL,
    base TEXT NOT NULL,            -- last key segment without the duplicate suffix
    heading BLOB NOT NULL,
    body BLOB NOT NULL,
    size INTEGER NOT NULL,         -- len(heading) + len(body)
    lines INTEGER NOT NULL,
    PRIMARY KEY (path, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sections_by_ord ON sections (path, present, ord);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    actor TEXT NOT NULL,
    type TEXT NOT NULL,
    path TEXT,
    section TEXT,
    data TEXT NOT NULL,
    prev TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_type ON events (type, id);
CREATE INDEX IF NOT EXISTS events_by_path ON events (path, section, id);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claims (  -- granted claims, expired ones until swept
    id TEXT PRIMARY KEY,
    token INTEGER NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    mode TEXT NOT NULL,
    targets TEXT NOT NULL,         -- JSON list of normalized targets
    priority INTEGER NOT NULL,
    strict INTEGER NOT NULL,
    granted_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    objective TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS claims_by_expiry ON claims (expires_at);
CREATE TABLE IF NOT EXISTS waiters (  -- queued requests, until their process collects the outcome
    id TEXT PRIMARY KEY,
    arrival INTEGER NOT NULL,
    agent TEXT NOT NULL,
    mode TEXT NOT NULL,
    targets TEXT NOT NULL,
    priority INTEGER NOT NULL,
    strict INTEGER NOT NULL,
    ttl REAL NOT NULL,
    objective TEXT NOT NULL,
    pid INTEGER NOT NULL,          -- the waiting process: once it is gone the wait is abandoned
    deadline REAL NOT NULL,
    state TEXT NOT NULL,           -- waiting, granted or aborted
    reason TEXT
);
CREATE TABLE IF NOT EXISTS counters (  -- token: the highest fencing token ever issued
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tallies (  -- lightweight counts kept out of the event log
    kind TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS tallies_by_kind ON tallies (kind, at);
CREATE TABLE IF NOT EXISTS reconciliations (  -- hand edits of generated regions, until resolved
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    region TEXT NOT NULL,
    human TEXT NOT NULL,           -- the region's text as the human left it
    generated TEXT NOT NULL,       -- what memkeeper would have written there
    opened_by TEXT NOT NULL,
    opened_at TEXT NOT NULL,
    resolution TEXT,               -- NULL while open, else keep-human, take-generated, undone
    resolved_by TEXT,
    resolved_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS reconciliations_open ON reconciliations (path, region)
    WHERE resolution IS NULL;
CREATE TABLE IF NOT EXISTS bodies (  -- each section's last bodies: the bases of merges
    path TEXT NOT NULL,
    key TEXT NOT NULL,
    rev INTEGER NOT NULL,
    body BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS bodies_by_rev ON bodies (path, key, rev);
CREATE TABLE IF NOT EXISTS proposals (  -- bodies of merges that could not land
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    section TEXT NOT NULL,
    base_rev INTEGER NOT NULL,
    body BLOB NOT NULL,
    agent TEXT NOT NULL,
    opened_at TEXT NOT NULL,
    state TEXT NOT NULL,           -- open, applied or dropped
    closed_by TEXT,
    closed_at TEXT,
    rev INTEGER                    -- applied: the rev it landed as
);
CREATE TABLE IF NOT EXISTS pending (  -- file replaces committed before they happen on disk
    seq INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    old_inode INTEGER,             -- the file replaced (NULL: the write creates it) …
    old_mtime_ns INTEGER,
    old_size INTEGER,
    old_hash TEXT,
    new_inode INTEGER NOT NULL,    -- … and the temp file renamed over it
    new_hash TEXT NOT NULL,
    temp TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS pending_by_path ON pending (path, seq);
"""


_ROW_COLUMNS = "key, ord, rev, hash, present, title, level, base, heading, body, lines"


def _row(values: tuple[Any, ...]) -> SectionRow:
    key, ord_, rev, hash_, present, title, level, base, heading, body, lines = values
    return SectionRow(
        key, ord_, rev, hash_, bool(present), title, level, base, bytes(heading), bytes(body), lines
    )


class Store(ClaimRows, ReconciliationRows, ProposalRows, PendingRows):
    """One connection to the memory home's database."""

    def __init__(self, connection: sqlite3.Connection, wal: str = "") -> None:
        self._db = connection
        self._wal = wal

    @classmethod
    def open(cls, home: str) -> Store:
        """Open (creating if needed) the store in the memory home directory ``home``;
        ``EnvironmentFailure`` on a network filesystem, before anything is written there."""
        refuse_network_filesystem(home)
        first = not os.path.exists(os.path.join(home, STATE_DB))
        if first:
            prepare_home(home)
        try:
            db = sqlite3.connect(
                os.path.join(home, STATE_DB),
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                db.execute("PRAGMA synchronous=NORMAL")  # the log's sync: walsync, shared
                store = cls(db, os.path.join(home, STATE_DB + "-wal"))
                if first or db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                    store._migrate(home)
            except BaseException:
                db.close()
                raise
        except sqlite3.Error as exc:
            raise EnvironmentFailure(
                f"{home}/state.db: cannot open the state store: {exc}"
            ) from exc
        return store

    def close(self) -> None:
        self._db.close()

    def prefetch_file(self, path: str) -> None:
        """A shared store's round-trip saver (``EtcdStore.prefetch_file``): nothing to do for
        a local one."""

    def prefetch_claims(self) -> None:
        """As ``prefetch_file``, for a claim operation: nothing to do here."""

    def keep_version(self, path: str, file_hash: str, file_rev: int) -> None:
        """A shared store's record of the versions a file had (``EtcdStore.keep_version``):
        one root's files are the local store's own, with no other versions to recognise."""

    def version_rev(self, path: str, file_hash: str) -> int | None:
        """As ``keep_version``: none here."""
        return None

    def trim_log(self, limit: int = WAL_TRIM_BYTES) -> None:
        """Fold a write-ahead log grown past ``limit`` back into the database and truncate it.

        The CLI exits without closing (closing checkpoints, which costs syncs on every call),
        so nothing else would stop the WAL growing — and every new process reads it through.
        """
        try:
            size = os.path.getsize(self._wal)
        except OSError:
            return
        if size > limit and not self._db.in_transaction:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()

    def _migrate(self, home: str) -> None:
        """Create or upgrade the schema; processes racing to do it take turns on a lock
        (switching to WAL while another connection holds the database fails at once)."""
        from memkeeper.fs import locks

        os.makedirs(os.path.join(home, LOCKS_DIR), exist_ok=True)
        with locks.file_lock(os.path.join(home, LOCKS_DIR, "schema.lock")):
            if self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0] != "wal":
                raise EnvironmentFailure("the state store cannot use WAL mode on this filesystem")
            self._create_or_upgrade()
            self._sync_log()  # a schema counts no changes: synced here, not by writing()

    def _create_or_upgrade(self) -> None:
        with self.writing():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:  # every statement is IF NOT EXISTS: upgrades add
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                if version < 3:  # the bodies indexed so far are the bases merges can use
                    self._db.execute(
                        "INSERT OR IGNORE INTO bodies (path, key, rev, body) "
                        "SELECT path, key, rev, body FROM sections WHERE present"
                    )
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise EnvironmentFailure(
                    f"the state store has schema version {version}, this memkeeper knows "
                    f"{SCHEMA_VERSION} — upgrade memkeeper or remove .memkeeper/ to rebuild it"
                )

    # -- transactions -------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self, *, durable: bool = True) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on error;
        a durable one returns once the log holding its commit is synced (``walsync``, shared
        with the commits of other threads made meanwhile).

        ``durable=False`` commits without waiting for the disk: a power cut may undo it —
        never a crash of the process, and never once a later durable commit has synced the
        log, which holds it first. For what can be redone or only ages out: a claim's release
        (the claim lives until its TTL)."""
        changes = self._db.total_changes
        with self._transaction("BEGIN IMMEDIATE"):
            yield
        if durable and self._db.total_changes != changes:  # one that wrote nothing has
            self._sync_log()  # nothing to sync

    def _sync_log(self) -> None:
        try:
            walsync.for_log(self._wal).sync()
        except OSError as exc:
            raise EnvironmentFailure(
                f"state store: cannot sync its log {self._wal}: {exc.strerror} — the last "
                "change may not survive a power cut; check the disk"
            ) from exc

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A consistent snapshot for several reads."""
        with self._transaction("BEGIN"):
            yield

    @contextlib.contextmanager
    def _transaction(self, begin: str) -> Iterator[None]:
        try:
            self._db.execute(begin)
        except sqlite3.Error as exc:
            raise EnvironmentFailure(f"state store: cannot begin a transaction: {exc}") from exc
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise EnvironmentFailure(f"state store: commit failed: {exc}") from exc

    def _rollback(self) -> None:
        """Roll back unless SQLite already did (RAISE(ROLLBACK), SQLITE_FULL, …): a second
        ROLLBACK would raise and hide the error that caused it."""
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    # -- files and sections ---------------------------------------------------------------

    def file_state(self, path: str) -> FileState | None:
        row = self._db.execute(
            "SELECT file_rev, file_hash FROM files WHERE path = ?", (path,)
        ).fetchone()
        return None if row is None else FileState(row[0], row[1])

    def indexed_section(self, path: str, key: str) -> tuple[FileState, SectionRow] | None:
        """The file's state and one present section, read together (one statement)."""
        row = self._db.execute(
            f"SELECT f.file_rev, f.file_hash, {', '.join('s.' + c for c in _COLS)} "
            "FROM files f JOIN sections s ON s.path = f.path "
            "WHERE f.path = ? AND s.key = ? AND s.present",
            (path, key),
        ).fetchone()
        return None if row is None else (FileState(row[0], row[1]), _row(row[2:]))

    def section_candidates(self, path: str, ref: str) -> list[tuple[FileState, SectionRow]]:
        """The file's state and each present section ``ref`` may name — its key, its base,
        or its key's last segment — in one statement (``refs.resolve_key`` decides)."""
        rows = self._db.execute(
            f"SELECT f.file_rev, f.file_hash, {', '.join('s.' + c for c in _COLS)} "
            "FROM files f JOIN sections s ON s.path = f.path "
            "WHERE f.path = ? AND s.present AND (s.key = ? OR s.base = ? OR "
            "substr(s.key, -?) = ?) ORDER BY s.ord",
            (path, ref, ref, len(ref) + 1, "/" + ref),
        ).fetchall()
        return [(FileState(row[0], row[1]), _row(row[2:])) for row in rows]

    def splice_context(self, path: str, ord_: int) -> tuple[int, bytes | None]:
        """What a patch of the section at ``ord_`` needs around it, in one statement: the
        size of the present sections before it and the heading of the one after (None)."""
        size, heading = self._db.execute(
            "SELECT (SELECT COALESCE(SUM(size), 0) FROM sections "
            "WHERE path = ? AND present AND ord < ?), "
            "(SELECT heading FROM sections WHERE path = ? AND present AND ord = ?)",
            (path, ord_, path, ord_ + 1),
        ).fetchone()
        return int(size), None if heading is None else bytes(heading)

    def section_keys(self, path: str) -> list[tuple[str, str]]:
        """``(key, base)`` of the file's present sections in document order."""
        return self._db.execute(
            "SELECT key, base FROM sections WHERE path = ? AND present ORDER BY ord", (path,)
        ).fetchall()

    def sections(self, path: str, *, with_absent: bool = False) -> list[SectionRow]:
        where = "" if with_absent else "AND present"
        rows = self._db.execute(
            f"SELECT {_ROW_COLUMNS} FROM sections WHERE path = ? {where} "
            "ORDER BY present DESC, ord",
            (path,),
        ).fetchall()
        return [_row(r) for r in rows]

    def indexed_paths(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT path FROM files ORDER BY path")]

    def put_file(self, path: str, state: FileState) -> None:
        self._db.execute(
            "INSERT INTO files (path, file_rev, file_hash) VALUES (?, ?, ?) "
            "ON CONFLICT (path) DO UPDATE SET file_rev = excluded.file_rev, "
            "file_hash = excluded.file_hash",
            (path, state.file_rev, state.file_hash),
        )

    def put_sections(self, path: str, rows: Iterable[SectionRow]) -> None:
        """Insert or replace these section rows of ``path`` (and keep their bodies)."""
        rows = list(rows)
        self.keep_bodies(path, rows)
        self._db.executemany(
            f"INSERT OR REPLACE INTO sections (path, {_ROW_COLUMNS}, size) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    path,
                    r.key,
                    r.ord,
                    r.rev,
                    r.hash,
                    int(r.present),
                    r.title,
                    r.level,
                    r.base,
                    r.heading,
                    r.body,
                    r.lines,
                    len(r.heading) + len(r.body),
                )
                for r in rows
            ],
        )

    # -- events ------------------------------------------------------------------------------

    def append_event(
        self,
        ts: str,
        actor: str,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
    ) -> Event:
        """Chain a new event after the last one. Call inside ``writing()``."""
        tail = self._db.execute("SELECT id, hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
        event = ev.next_event(tail, ts, actor, type, path, section, data)
        self._db.execute(
            "INSERT INTO events (id, ts, actor, type, path, section, data, prev, hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (event.id, ts, actor, type, path, section, _DATA.encode(data), event.prev, event.hash),
        )
        self._db.execute(  # inside writing(): cache() without its own transaction
            "INSERT OR REPLACE INTO cache (key, value) VALUES (?, ?)",
            (EVENTS_HEAD, f"{event.id} {event.hash}"),
        )
        return event

    def events_head(self) -> tuple[int, str] | None:
        """The id and hash of the last event appended, recorded beside the log (a log that
        ends before it lost its tail); None for a store that has not recorded one yet."""
        found = self.cached(EVENTS_HEAD)
        if found is None:
            return None
        head_id, _, head_hash = found.partition(" ")
        return int(head_id), head_hash

    def last_event(self) -> Event | None:
        row = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else _event(row)

    def events(self, since: int = 0, limit: int | None = None) -> list[Event]:
        """Events with ``id > since``, oldest first."""
        rows = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE id > ? ORDER BY id LIMIT ?",
            (since, -1 if limit is None else limit),
        ).fetchall()
        return [_event(r) for r in rows]

    def events_of(self, path: str, section: str | None, limit: int) -> list[Event]:
        """The last ``limit`` events about ``path`` (and ``section``; None: about the whole
        file), newest first."""
        where = "section IS NULL" if section is None else "section = ?"
        params = (path,) if section is None else (path, section)
        rows = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE path = ? AND {where} "
            "ORDER BY id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [_event(r) for r in rows]

    def last_events(self, path: str) -> dict[str | None, Event]:
        """The last event about each section of ``path`` (key None: about the whole file)."""
        rows = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE id IN "
            "(SELECT MAX(id) FROM events WHERE path = ? GROUP BY section)",
            (path,),
        ).fetchall()
        return {event.section: event for event in map(_event, rows)}

    def events_typed(self, types: tuple[str, ...], since_ts: str) -> list[Event]:
        """Events of these types from ``since_ts`` on, oldest first."""
        marks = ", ".join("?" * len(types))
        rows = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE type IN ({marks}) AND ts >= ? ORDER BY id",
            (*types, since_ts),
        ).fetchall()
        return [_event(r) for r in rows]

    def data_version(self) -> int:
        """SQLite's counter of commits by other connections: a change signal that costs no
        read of any table (the dashboard polls it)."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    # -- small cache (parsed policy facts keyed by content hash) -------------------------

    def cached(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM cache WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def cache(self, key: str, value: str) -> None:
        """Remember a derived fact, inside the current transaction or in one of its own."""
        if self._db.in_transaction:
            self._db.execute(
                "INSERT OR REPLACE INTO cache (key, value) VALUES (?, ?)", (key, value)
            )
            return
        with self.writing(durable=False):  # derived: a power cut that undoes it costs a
            self.cache(key, value)  # recomputation

    def last_claim_event(self, claim_id: str) -> Event | None:
        """The latest event that ended claim ``claim_id`` (released, expired or aborted)."""
        row = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE type IN "
            "('claim.released', 'claim.expired', 'claim.aborted') "
            "AND json_extract(data, '$.id') = ? ORDER BY id DESC LIMIT 1",
            (claim_id,),
        ).fetchone()
        return None if row is None else _event(row)

    def count_events(self, type: str, since_ts: str, reason: str | None = None) -> int:
        """Events of ``type`` at or after ``since_ts`` (and with ``data.reason``, if given)."""
        sql = "SELECT COUNT(*) FROM events WHERE type = ? AND ts >= ?"
        if reason is None:
            return int(self._db.execute(sql, (type, since_ts)).fetchone()[0])
        sql += " AND json_extract(data, '$.reason') = ?"
        return int(self._db.execute(sql, (type, since_ts, reason)).fetchone()[0])


_COLS = _ROW_COLUMNS.split(", ")
_DATA = json.JSONEncoder(ensure_ascii=False, sort_keys=True)  # an event's data as stored
_EVENT_COLUMNS = "id, ts, actor, type, path, section, data, prev, hash"


def _event(row: tuple[Any, ...]) -> Event:
    id_, ts, actor, type_, path, section, data, prev, hash_ = row
    return Event(id_, ts, actor, type_, path, section, json.loads(data), prev, hash_)


def prepare_home(home: str) -> None:
    """Create ``.memkeeper/`` with its ``.gitignore`` of ``*`` and its lock directory."""
    os.makedirs(os.path.join(home, LOCKS_DIR), exist_ok=True)
    ignore = os.path.join(home, ".gitignore")
    if not os.path.exists(ignore):
        with open(ignore, "w", encoding="utf-8") as handle:
            handle.write("*\n")
