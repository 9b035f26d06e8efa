"""The SQLite store's core: its connection, its transactions and the small cache; the tables
of the domains a read or a patch uses are a mixin of it (``files``, ``events``, ``claims``,
``pending``, ``reads``), assembled into ``Store`` by the package; the others' are a
``SqliteDomain`` each on the same connection, loaded on first use.

Every writing operation runs inside ``writing()``, one ``BEGIN IMMEDIATE`` transaction (a
deferred read-then-write fails at once with SQLITE_BUSY_SNAPSHOT); reads that need a
consistent snapshot run inside ``reading()``. WAL mode; a durable commit returns once the log
is synced (``walsync``: commits with ``synchronous=NORMAL``, then one shared ``fdatasync`` of
the log for every commit made before it — group commit). Writers take turns at the write lock
in the order they ask (``writeturn``). A successful patch is a promise to an agent.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys

from memkeeper.errors import EnvironmentFailure
from memkeeper.fs.home import prepare_home, read_store_mark, write_store_mark
from memkeeper.names import LOCKS_DIR, STATE_DB, STORE_MARK, WRITE_TURN
from memkeeper.store.sqlite import schema
from memkeeper.store.sqlite.netfs import refuse_network_filesystem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Self

    from memkeeper.store.sqlite.writeturn import WriteTurn

# How long a write waits for SQLite's write lock before it gives up (store_busy: busy.py).
BUSY_TIMEOUT_S = 10.0
WAL_TRIM_BYTES = 1024 * 1024


class SqliteCore:
    """One connection to the memory home's database."""

    def __init__(self, connection: sqlite3.Connection, wal: str = "", turns: str = "") -> None:
        self._db = connection
        self._wal = wal
        self._turns = turns  # the writers' turns' lock file ("": SQLite's lock alone)
        self._turn: WriteTurn | None = None  # made at the first write

    @classmethod
    def open(cls, home: str) -> Self:
        """Open (creating if needed) the store in the memory home directory ``home``;
        ``EnvironmentFailure`` on a network filesystem, before anything is written there."""
        refuse_network_filesystem(home)
        mark = read_store_mark(home)
        if mark is not None:
            _refuse_lost(home)
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
                # The log's sync is walsync's, shared.
                db.execute("PRAGMA synchronous=NORMAL")
                turns = os.path.join(home, LOCKS_DIR, WRITE_TURN)
                store = cls(db, os.path.join(home, STATE_DB + "-wal"), turns)
                if first or _user_version(db) != schema.SCHEMA_VERSION:
                    store._migrate(home)
                store._check_identity(home, mark)
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
        if self._turn is not None:
            self._turn.close()

    def prefetch_file(self, path: str) -> None:
        """A shared store's round-trip saver (``EtcdStore.prefetch_file``): nothing to do for
        a local one."""

    def prefetch_files(self, paths: list[str]) -> None:
        """As ``prefetch_file``, for many files at once: nothing to do here."""

    def prefetch_claims(self) -> None:
        """As ``prefetch_file``, for a claim operation: nothing to do here."""

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

    def _check_identity(self, home: str, mark: str | None) -> None:
        """The database is the store the home's mark names. A new store (or one an older
        memkeeper made) gets an id, in both; a database whose id is not the mark's — none, or
        another — was made afresh over a lost one (``store_lost``)."""
        held = self.cached(STORE_ID_KEY)
        if held is not None and held == mark:
            return
        if mark is not None:
            raise _lost(home, "holds another store than the one this home had")
        # First open since ids are kept: one process names the store, the others read it.
        from memkeeper.fs import locks

        os.makedirs(os.path.join(home, LOCKS_DIR), exist_ok=True)
        with locks.file_lock(os.path.join(home, LOCKS_DIR, "schema.lock")):
            with self.writing():
                held = self.cached(STORE_ID_KEY)
                if held is None:
                    import secrets

                    held = secrets.token_hex(16)
                    self.cache(STORE_ID_KEY, held)
            # The database first (durably): a crash before the mark is adopted next time.
            if read_store_mark(home) is None:
                write_store_mark(home, held)
        if read_store_mark(home) != held:
            raise _lost(home, "holds another store than the one this home had")

    def _migrate(self, home: str) -> None:
        """Create or upgrade the schema; processes racing to do it take turns on a lock
        (switching to WAL while another connection holds the database fails at once)."""
        from memkeeper.fs import locks

        os.makedirs(os.path.join(home, LOCKS_DIR), exist_ok=True)
        with locks.file_lock(os.path.join(home, LOCKS_DIR, "schema.lock")):
            if self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0] != "wal":
                raise EnvironmentFailure("the state store cannot use WAL mode on this filesystem")
            with self.writing():
                schema.create_or_upgrade(self._db)
            # A schema counts no changes: synced here, not by writing().
            self._sync_log()

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
        self._take_turn()
        try:
            with self._transaction("BEGIN IMMEDIATE"):
                yield
        finally:
            if self._turn is not None:
                self._turn.give()
        # One that wrote nothing has nothing to sync.
        if durable and self._db.total_changes != changes:
            self._sync_log()

    def _take_turn(self) -> None:
        """Wait for this writer's turn (``writeturn``): ``store_busy`` naming the holder when
        another writer held it all of ``BUSY_TIMEOUT_S``."""
        if not self._turns:
            return
        if self._turn is None:
            from memkeeper.store.sqlite.writeturn import WriteTurn

            self._turn = WriteTurn(self._turns)
        if not self._turn.take(BUSY_TIMEOUT_S):
            from memkeeper.fs import locks

            db = self._wal.removesuffix("-wal") or STATE_DB
            holder = locks.holder(self._turn.path)
            raise locks.held_too_long_by(holder, db, "the state store's write lock", BUSY_TIMEOUT_S)

    def _sync_log(self) -> None:
        from memkeeper.store.sqlite import walsync  # a command that writes nothing: never

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
            from memkeeper.store.sqlite import busy  # (only once a write waited too long)

            if busy.is_busy(exc):  # another process held the write lock all that time
                db = self._wal.removesuffix("-wal") or STATE_DB
                raise busy.busy_error(db, BUSY_TIMEOUT_S) from exc
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
        # Derived: a power cut that undoes it costs a recomputation.
        with self.writing(durable=False):
            self.cache(key, value)


class SqliteDomain:
    """A domain loaded on first use (``Store.proposals``, ``Store.mail`` …), not a mixin of
    ``Store``: its tables, on the store's connection, so in the transaction the store has
    open (``Store.writing()``) or, outside one, each statement its own (autocommit)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection


def _user_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


STORE_ID_KEY = "store:id"


def _refuse_lost(home: str) -> None:
    """``StoreLost`` when the home had a store and its database is gone, empty, or lost the
    write-ahead log that held its last commits (``-wal`` deleted while ``-shm`` still counts
    frames in it): answering from a fresh or older store would grant claims held live and
    hand out fencing tokens again."""
    db = os.path.join(home, STATE_DB)
    try:
        size = os.path.getsize(db)
    except FileNotFoundError:
        raise _lost(home, "is missing") from None
    if size == 0:
        raise _lost(home, "is empty (0 bytes)")
    if _frames_without_log(db):
        raise _lost(home, "lost its write-ahead log (state.db-wal), which held its last commits")


def _frames_without_log(db: str) -> bool:
    """The wal-index says the log holds committed frames, and the log is not there."""
    if os.path.exists(db + "-wal"):
        return False
    try:
        with open(db + "-shm", "rb") as handle:
            header = handle.read(48)
    except FileNotFoundError:
        return False
    # The wal-index header: isInit at byte 12, mxFrame (frames in the log) at 16, native order.
    if len(header) < 20 or header[12] != 1:
        return False
    frames = int.from_bytes(header[16:20], sys.byteorder)
    # A last connection closing cleanly deletes the log, then the index: look again.
    import time

    time.sleep(0.01)
    return frames > 0 and os.path.exists(db + "-shm") and not os.path.exists(db + "-wal")


def _lost(home: str, what: str) -> EnvironmentFailure:
    return EnvironmentFailure(
        f"{home}/{STATE_DB} {what}: this home's store ({home}/{STORE_MARK}) is lost, with its "
        "revisions, live claims and fencing tokens — memkeeper will not start a new one in its "
        "place by itself, since it would grant claims others still hold and hand out tokens "
        f"again. Restore {STATE_DB} (and {STATE_DB}-wal) from a backup; or, to start afresh "
        f"knowingly, stop every agent and move {home} aside",
        reason="store_lost",
    )
