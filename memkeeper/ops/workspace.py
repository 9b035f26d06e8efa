"""``Workspace``: the context every operation takes — one root, seen by one agent.

It holds what operations share and nothing they decide: the root and agent, the clock, the
store (opened on first use), the per-file locks, event recording and the transactions an
operation changes files in (``editing``, ``writing``). Its parts have modules of their own,
each a base class of ``Workspace`` — the write-ahead replace (``ops.writeahead``), kept links
(``ops.keptlinks``), indexing of changes memkeeper did not make (``ops.indexing``), the
policy's verdicts (``ops.verdicts``) — or made on first use: who signs the events
(``ops.signing``), and the sync of this root's files with a shared store (``ops.sharedsync``).
Operations live in their own modules (``ops.read``, ``ops.patch`` …); ``memkeeper.Memory`` is
the public façade over them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import sys
import time

from memkeeper import names
from memkeeper.errors import Invalid
from memkeeper.events import digest, iso_utc
from memkeeper.fs import files, root
from memkeeper.ops.indexing import Indexing
from memkeeper.ops.keptlinks import KeptLinks
from memkeeper.ops.verdicts import Verdicts
from memkeeper.ops.writeahead import WriteAhead
from memkeeper.policy.storeurl import StoreUrl, parse_store_url, policy_store
from memkeeper.store.retry import store_retry
from memkeeper.store.sqlite import Store, prepare_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any, TypeVar

    from memkeeper.clock import Clock
    from memkeeper.identity.sessions import Session
    from memkeeper.ops.sharedsync import SharedSync
    from memkeeper.ops.signing import Signing
    from memkeeper.records import Event, FileState
    from memkeeper.store.etcd.access import Access
    from memkeeper.store.protocol import StampStore, StateStore

    T = TypeVar("T")
    AnyStore = StateStore


def store_url(setting: str, source: str) -> StoreUrl:
    """The shared store ``setting`` names (``Invalid`` saying what is wrong, and where)."""
    try:
        return parse_store_url(setting)
    except ValueError as err:
        raise Invalid(
            f"{source}: {err} — write it as etcd[s]://HOST:PORT[,HOST:PORT…]/PREFIX, or unset it "
            "to keep the state in the local SQLite store (.memkeeper/state.db)"
        ) from None


def etcd_access(url: StoreUrl) -> Access:
    """How to reach the store ``url`` names: TLS and a user, from the environment (``Invalid``
    naming the variable to fix when they cannot work; nothing is sent before)."""
    from memkeeper.store.etcd import access

    try:
        return access.Access.from_environ(os.environ, tls=url.tls)
    except ValueError as err:
        raise Invalid(f"the shared store {url.text}: {err}") from None


class Workspace(Verdicts, Indexing, WriteAhead, KeptLinks):
    """Shared memory files under one root, seen by one agent: the operations' context."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        agent: str,
        clock: Clock | None = None,
        session: Session | None = None,
    ) -> None:
        self.top = os.fspath(root)  # the root as a str: pathlib costs start-up time
        self.agent = agent
        self.session = session
        self.home = names.home_of(self.top)
        self._clock = clock
        self._db: AnyStore | None = None
        self._url: StoreUrl | None = None
        self._url_known = False
        self._sync: SharedSync | None = None  # made on first use, with a shared store
        self._editing: set[str] = set()  # files an operation is changing (``editing``)
        self._relpaths: dict[tuple[str, str], str] = {}
        self._wakes: set[tuple[str, str]] = set()  # whom the operation's events wake (``again``)
        self._depth = 0  # ``again`` within ``again``: only the outermost has committed it all
        super().__init__()

    def close(self) -> None:
        # Kept links being removed in the background: gone before we return (the thread runs
        # only once a replace or a mark started it, which loaded its module).
        background = sys.modules.get("memkeeper.fs.background")
        if background is not None:
            background.drain()
        if self._db is not None:
            self._db.close()
            self._db = None

    # -- plumbing -------------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The memory root (resolved)."""
        from pathlib import Path

        return Path(self.top)

    @property
    def store_opened(self) -> bool:
        return self._db is not None

    @property
    def has_store(self) -> bool:
        """True when the memory home holds a state store (or a shared store is named);
        read-only operations create none where there is none (they answer as an empty
        store would)."""
        return (
            self._db is not None
            or self.shared
            or os.path.exists(os.path.join(self.home, names.STATE_DB))
            # a home whose store was lost: opening it says so (never an empty store's answer)
            or os.path.exists(os.path.join(self.home, names.STORE_MARK))
        )

    @property
    def store(self) -> AnyStore:
        if self._db is None:
            url = self.store_url()
            if url is None:
                self._db = Store.open(self.home)
            else:
                from memkeeper.store.etcd import EtcdStore
                from memkeeper.store.etcd.gateway import Gateway
                from memkeeper.store.etcd.members import Members
                from memkeeper.store.etcd.tokens import Tokens

                access, home = etcd_access(url), self.home
                prepare_home(home)  # the gateway keeps its token and members there
                gateway = Gateway(
                    list(url.endpoints), members=Members(home), access=access, tokens=Tokens(home)
                )
                self._db = EtcdStore(gateway, url.prefix.encode())
        return self._db

    @property
    def stamp_store(self) -> StampStore:
        """This checkout's files' stat stamps (``ops.stamping``): the SQLite store's table;
        with a shared store, a file in the home (they describe this machine's files)."""
        if not self.shared:
            local = self.store
            assert isinstance(local, Store)
            return local.stamp_table()
        from memkeeper.fs.stampfile import StampFile

        return StampFile(self.home)

    def store_url(self) -> StoreUrl | None:
        """The shared store this root's state lives in (reference §12): ``$MEMKEEPER_STORE``,
        else the policy's ``store:``; ``None``: the local SQLite store. Decided once per
        workspace."""
        if not self._url_known:
            setting, source = os.environ.get(names.STORE_ENV) or None, names.STORE_ENV
            if setting is None:
                setting = policy_store(self._policy()[0])
                source = f"{names.POLICY_FILE}: store"
            self._url = None if setting is None else store_url(setting, source)
            self._url_known = True
        return self._url

    @property
    def shared(self) -> bool:
        """Whether the state lives in a shared store (etcd), other roots' files beside ours."""
        return self.store_url() is not None

    def relpath(self, user_path: str) -> str:
        """A user's path (relative to the cwd inside the root, else to the root), confined.
        Remembered per path and directory: confinement resolves symlinks (~0.1 ms), and
        every read and write still walks to the file without following one."""
        asked = (user_path, os.getcwd())
        found = self._relpaths.get(asked)
        if found is None:
            found = files.confine(self.top, root.relative_path(self.top, user_path))
            self._relpaths[asked] = found
        return self.linked_private(found)

    def linked_private(self, rel: str) -> str:
        """``rel``, or — when it is a hard link to a private file — that file's path: the
        policy judges the file reached, so a second name never reads a scratchpad into the
        store or serves it. Asked every time (a link can be made at any moment); one ``lstat``
        unless the file has several links."""
        try:
            info = os.lstat(os.path.join(self.top, rel))
        except OSError:
            return rel
        if info.st_nlink < 2 or not stat.S_ISREG(info.st_mode):
            return rel
        from memkeeper.fs.walk import managed_files
        from memkeeper.policy.loader import load_policy

        for other, found in managed_files(load_policy(self.top), self.top):
            if found.file_class != "private" or other == rel:
                continue
            with contextlib.suppress(OSError):
                seen = os.lstat(os.path.join(self.top, other))
                if (seen.st_dev, seen.st_ino) == (info.st_dev, info.st_ino):
                    return other
        return rel

    def now(self) -> float:
        """The wall clock: events' times, quiet periods, what people read."""
        if self._clock is not None:
            return self._clock.now()
        return time.time()

    @property
    def clock(self) -> Clock:
        """The clock given, else the system's."""
        if self._clock is None:
            from memkeeper.clock import SystemClock

            self._clock = SystemClock()
        return self._clock

    def claim_now(self) -> float:
        """The time claims are judged by (reference §4 "Expiry"): with the local store, this
        machine's uptime from the boot's epoch — one clock for every process, whatever its
        wall clock says; with a shared store, the wall clock (etcd's leases judge expiry)."""
        return self.store.claim_time(self.clock)

    def locked(self, rel: str) -> Any:
        """The file's lock (a context manager); every writer of ``rel`` holds it."""
        from memkeeper.fs import locks

        return locks.file_lock(self._lock_path(rel), rel)

    def try_locked(self, rel: str) -> Any:
        """The file's lock if nobody holds it (a context manager yielding whether it was
        taken): for work that holds several files' locks at once and leaves a busy file to
        the one-file path, which waits for it."""
        from memkeeper.fs import locks

        return locks.try_file_lock(self._lock_path(rel))

    def _lock_path(self, rel: str) -> str:
        if self.shared:
            if self._kept_dir is None:  # the lock directory; the state is elsewhere
                prepare_home(self.home)
                self.kept_dir()
        else:
            _ = self.store  # the home (and its lock directory) exists once the store is open
        name = digest(rel.encode())[7:31] + names.LOCK_SUFFIX
        return os.path.join(self.home, names.LOCKS_DIR, name)

    def record(
        self,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
        actor: str | None = None,
    ) -> Event:
        """Append one event to the chain, by ``actor`` (default: this agent), now, signed with
        this process's key (``ops.signing``: ``Refused`` if it may not write as its agent)."""
        actor = actor or self.agent
        sign = self.signing.sign_as(actor)
        event = self.store.append_event(iso_utc(self.now()), actor, type, path, section, data, sign)
        if type.startswith(("message.", "claim.")):  # who it wakes, poked by ``again``
            from memkeeper.ops.wakes import woken

            self._wakes.update(woken(type, data))
        return event

    @functools.cached_property
    def signing(self) -> Signing:
        """Who signs this workspace's events (``ops.signing``), made at the first one."""
        from memkeeper.ops.signing import Signing

        return Signing(self.top, self.agent, self.session)

    # -- the write path: every operation that replaces a managed file goes through these ------

    @contextlib.contextmanager
    def editing(self, rel: str, *, missing_ok: bool = False) -> Iterator[bytes | None]:
        """Under ``rel``'s lock (the caller holds it): read its bytes, open one store
        transaction and index whatever changed since memkeeper last looked (so an unseen
        human save counts), then yield the bytes (``None``: the file does not exist, with
        ``missing_ok``). The transaction commits when the block ends. With a shared store,
        a file another root changed is brought up to date first and the operation starts
        over (``SharedSync.catching_up``)."""
        self.settle_due(rel)
        exists = not missing_ok or os.path.lexists(os.path.join(self.top, rel))
        data = files.read_bytes(self.top, rel, whole=True) if exists else None
        self._editing.add(rel)
        try:
            catching_up = self.sync.catching_up(rel) if self.shared else contextlib.nullcontext()
            with catching_up, self.writing():
                if self.shared:
                    self.sync.check_behind(rel, data)
                if data is not None:
                    self.index_file(rel, data)
                yield data
        finally:
            self._editing.discard(rel)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One store transaction (``Store.writing``) whose file replaces (``replace_file``)
        happen after it commits: the store is the write-ahead log of the files, its synced
        commit the only sync on the write's path. A replace the commit holds but the disk does
        not (a crash between the two) is redone the next time the file is looked at
        (``index_file``). Inside another ``writing()``, a part of it."""
        if self.writing_open():
            yield
            return
        self.begin_staging()
        try:
            with self.store.writing():
                yield
        except BaseException:
            self.abandon_staged()
            if self._sync is not None:
                self._sync.take_marks()
            raise
        marks = [] if self._sync is None else self._sync.take_marks()
        self.finish_staged()
        if marks:  # each file now durably holds what its mark says (shared store)
            self.sync.write_marks(marks)

    def again(self, attempt: Callable[[], T]) -> T:
        """Run ``attempt`` (a whole operation) until a shared store commits it: another
        writer that got in first (``StoreRetry``: nothing of the attempt was applied) makes
        it start over on what is there now, after a short random pause (``store_retry``)."""
        self._depth += 1
        try:
            return store_retry()(attempt)
        finally:
            self._depth -= 1
            if not self._depth and self._wakes:  # now that the operation has committed
                from memkeeper.ops.wakes import wake

                noted, self._wakes = self._wakes, set()
                wake(self.home, self.shared, noted)

    # -- a shared store: this root's files and the store's (``SharedSync``) --------------------

    @property
    def sync(self) -> SharedSync:
        """The sync of this root's files with the shared store (only with one)."""
        if self._sync is None:
            from memkeeper.ops.sharedsync import SharedSync

            self._sync = SharedSync(self)
        return self._sync

    def seen_agreeing(self, rel: str, state: FileState, data: bytes) -> None:
        """With a shared store: a read found ``rel`` holding the store's version ``state``
        (``data``); remember it now, as the base of this root's next edit of the file."""
        if self.shared:
            self.sync.seen_agreeing(rel, state, data)

    def agreed(self, rel: str, file_rev: int, file_hash: str, data: bytes) -> None:
        """With a shared store: once the open transaction has committed and its replaces are
        done, remember that ``rel`` holds ``data``, the store's version ``file_rev`` of it."""
        self.sync.agreed(rel, file_rev, file_hash, data)

    def look_shared(self, rel: str, data: bytes, file_hash: str, state: FileState) -> bytes | None:
        """``rel`` holds ``data``, not the store's version of it: the bytes to index as this
        root's edit (``None``: nothing to push). See ``SharedSync.look``."""
        return self.sync.look(rel, data, file_hash, state)

    def sync_file(self, rel: str) -> None:
        """Under ``rel``'s lock, with a shared store: bring the file up to date with the store
        — creating it when another root made it and this one never had it — or push what was
        edited here, in a transaction of its own."""
        self.sync.sync_file(rel)

    def unchanged_here(self, rel: str, file_hash: str) -> bool:
        """With a shared store: whether ``rel`` holds what it held when it last agreed with
        the store (``file_hash`` is its bytes' hash) — no edit of this root's."""
        return self.sync.unchanged_here(rel, file_hash)

    def shared_region(self) -> str:
        """The region name of this root's reconciliations with the shared store."""
        return self.sync.region()

    def diverged(self, rel: str) -> int | None:
        """The open reconciliation of this root's ``rel`` with the shared store, if any."""
        return self.sync.diverged(rel)
