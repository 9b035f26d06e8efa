"""``Workspace``: the context every operation takes — one root, seen by one agent.

It holds what operations share and nothing they decide: the root and agent, the clock, the
store (opened on first use), the per-file locks, indexing of changes memkeeper did not make,
event recording and the policy's verdicts (cached by the policy's hash, so a ``read`` or a
``patch`` of an indexed file parses no YAML). Operations live in their own modules
(``ops.read``, ``ops.patch`` …); ``memkeeper.Memory`` is the public façade over them.
"""

from __future__ import annotations

import contextlib
import json
import os
import time

from memkeeper import names
from memkeeper.errors import EnvironmentFailure, Invalid, PolicyInvalid, Refused
from memkeeper.events import digest, iso_utc
from memkeeper.fs import files, root, synced
from memkeeper.policy.storeurl import StoreUrl, parse_store_url, policy_store
from memkeeper.records import Event, FileState, PendingWrite, SectionRow, Verdict
from memkeeper.store.retry import StoreRetry
from memkeeper.store.sqlite import Store, prepare_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any, TypeVar

    from memkeeper.clock import Clock
    from memkeeper.markdown.revisions import Reindex
    from memkeeper.markdown.sections import Document
    from memkeeper.store.protocol import StateStore

    T = TypeVar("T")
    AnyStore = StateStore


RACE_ATTEMPTS = 20  # operations started over when a writer without the lock saved meanwhile
KEEP_S = 2.0  # a replaced file is kept this long, for an editor that still had it open
QUIET_S = 1.0  # a kept file a writer saved into is recovered once quiet this long
REFRESH_ATTEMPTS = 10  # looks at a file mid-save before a read answers from the index
STORE_ATTEMPTS = 50  # operations started over when a shared store's writer got in first
POLICY_CACHE = "policy-cache.json"  # shared store: the policy's verdicts, in this root's home
SHARED_REGION = "store:"  # a reconciliation of a root's file and the shared store: + root id


ORPHAN_S = 30.0  # a kept link whose operation never replaced the file goes after this long
BASE_SUFFIX = ".base"  # beside a kept link: the file's path, NUL, the bytes it held
CHECKPOINT_WRITES = 32  # unsynced replaces of one file before the next write fsyncs them …
CHECKPOINT_S = 10.0  # … or once the oldest of them is this old


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def store_url(setting: str, source: str) -> StoreUrl:
    """The shared store ``setting`` names (``Invalid`` saying what is wrong, and where)."""
    try:
        return parse_store_url(setting)
    except ValueError as err:
        raise Invalid(
            f"{source}: {err} — write it as etcd://HOST:PORT[,HOST:PORT…]/PREFIX, or unset it "
            "to keep the state in the local SQLite store (.memkeeper/state.db)"
        ) from None


class _Behind(Exception):
    """Inside an operation's transaction (``editing``): the file is not the store's version
    and this root did not simply edit it — bring it up to date first (``sync_file``), then
    run the operation again. Nothing of the transaction is committed."""


class _Replace:
    """A replace staged in the open transaction: the file, its staged temp, the bytes it
    replaces (``None``: it creates the file) and the new ones."""

    __slots__ = ("rel", "staged", "old", "new")

    def __init__(self, rel: str, staged: files.Staged, old: bytes | None, new: bytes) -> None:
        self.rel, self.staged, self.old, self.new = rel, staged, old, new


def _base(keep: str, rel: str, old: bytes) -> tuple[str, bytes]:
    """The ``.base`` beside a kept link, should a writer still save into the replaced file:
    its path, and the file's path, NUL and what the file held (what to merge a save against)."""
    return keep + BASE_SUFFIX, rel.encode() + b"\0" + old


def _lost(ours: bytes, conflicts: list[str] | None = None) -> dict[str, Any]:
    """A ``save.raced`` event's data when memkeeper's committed bytes could not stay in the
    file: they are kept here, whole."""
    text = ours.decode("utf-8", "replace")
    return {"stage": "commit", "merged": False, "conflicts": conflicts or [], "text": text}


class Workspace:
    """Shared memory files under one root, seen by one agent: the operations' context."""

    def __init__(
        self, root: str | os.PathLike[str], agent: str, clock: Clock | None = None
    ) -> None:
        self.top = os.fspath(root)  # the root as a str: pathlib costs start-up time
        self.agent = agent
        self.home = names.home_of(self.top)
        self._clock = clock
        self._db: AnyStore | None = None
        self._url: StoreUrl | None = None
        self._url_known = False
        self._marks: list[synced.Mark] = []  # to remember once the commit and renames are done
        self._marked: dict[str, tuple[int, str]] = {}  # the marks this workspace knows
        self._editing: set[str] = set()  # files an operation is changing (``editing``)
        self._local_cache: dict[str, object] | None = None  # shared store: ``_cached``
        self._verdicts: dict[str, Verdict] = {}
        self._ttls: dict[str, tuple[int, int]] = {}
        self._policy_seen: tuple[object, bytes | None, str] | None = None
        self._kept_seen: dict[str, tuple[int, int]] = {}  # kept links read and found unchanged
        # file → the earliest time one of its kept links can be KEEP_S old (settle_kept)
        self._kept_due: dict[str, float] = {}
        self._staged: list[_Replace] | None = None  # replaces waiting for writing()'s commit
        self._relpaths: dict[tuple[str, str], str] = {}
        self._unsynced: dict[str, tuple[int, float]] = {}  # replaces since a checkpoint here
        self._kept_dir: str | None = None  # .memkeeper/kept/, once it is known to exist

    def close(self) -> None:
        files.drain()  # kept links being removed in the background: gone before we return
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

                gateway = Gateway(list(url.endpoints), members=Members(self.home))
                self._db = EtcdStore(gateway, url.prefix.encode())
        return self._db

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

    def root_id(self) -> str:
        """This root's name among the roots sharing a store: made once, kept in the home."""
        path = os.path.join(self.home, names.ROOT_ID)
        try:
            with open(path, encoding="utf-8") as handle:
                found = handle.read().strip()
            if found:
                return found
        except FileNotFoundError:
            pass
        prepare_home(self.home)
        made = os.urandom(6).hex()
        temp = f"{path}.{os.getpid()}.tmp"
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(made + "\n")
        try:
            os.link(temp, path)  # the first root id made stays: two makers agree on it
        except FileExistsError:
            os.unlink(temp)
            return self.root_id()
        os.unlink(temp)
        return made

    def relpath(self, user_path: str) -> str:
        """A user's path (relative to the cwd inside the root, else to the root), confined.
        Remembered per path and directory: confinement resolves symlinks (~0.1 ms), and
        every read and write still walks to the file without following one."""
        asked = (user_path, os.getcwd())
        found = self._relpaths.get(asked)
        if found is None:
            found = files.confine(self.top, root.relative_path(self.top, user_path))
            self._relpaths[asked] = found
        return found

    def now(self) -> float:
        if self._clock is not None:
            return self._clock.now()
        import time

        return time.time()

    def locked(self, rel: str) -> Any:
        """The file's lock (a context manager); every writer of ``rel`` holds it."""
        if self.shared:
            if self._kept_dir is None:  # the lock directory; the state is elsewhere
                prepare_home(self.home)
                self.kept_dir()
        else:
            _ = self.store  # the home (and its lock directory) exists once the store is open
        lock = os.path.join(self.home, names.LOCKS_DIR, digest(rel.encode())[7:31] + ".lock")
        return files.file_lock(lock)

    def record(
        self,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
        actor: str | None = None,
    ) -> Event:
        """Append one event to the chain, by ``actor`` (default: this agent), now."""
        return self.store.append_event(
            iso_utc(self.now()), actor or self.agent, type, path, section, data
        )

    # -- the write path: every operation that replaces a managed file goes through these ------

    @contextlib.contextmanager
    def editing(self, rel: str, *, missing_ok: bool = False) -> Iterator[bytes | None]:
        """Under ``rel``'s lock (the caller holds it): read its bytes, open one store
        transaction and index whatever changed since memkeeper last looked (so an unseen
        human save counts), then yield the bytes (``None``: the file does not exist, with
        ``missing_ok``). The transaction commits when the block ends."""
        due = self._kept_due.get(rel, 0.0)  # a late save into a replaced file comes back
        if not 0 <= due - time.time() <= KEEP_S:  # (not before a link can be old enough)
            self.settle_kept(rel, min_age=KEEP_S)
        exists = not missing_ok or os.path.lexists(os.path.join(self.top, rel))
        data = files.read_bytes(self.top, rel, whole=True) if exists else None
        self._editing.add(rel)
        try:
            with self.writing():
                if self.shared:
                    self.store.prefetch_file(rel)
                    missing = data is None and self.store.file_state(rel) is not None
                    if missing and self._mark(rel) is None:  # (deleted here: stays deleted)
                        raise _Behind(f"{rel}: the store has it, this root never had it")
                if data is not None:
                    self.index_file(rel, data)
                yield data
        except _Behind:  # another root changed the file: bring it here, then start over
            self._editing.discard(rel)
            self.sync_file(rel)
            self._refuse_diverged(rel)
            raise StoreRetry(f"{rel}: brought up to date with the store; again") from None
        finally:
            self._editing.discard(rel)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One store transaction (``Store.writing``) whose file replaces (``replace_file``)
        happen after it commits: the store is the write-ahead log of the files, its synced
        commit the only sync on the write's path. A replace the commit holds but the disk does
        not (a crash between the two) is redone the next time the file is looked at
        (``index_file``). Inside another ``writing()``, a part of it."""
        if self._staged is not None:
            yield
            return
        self._staged = []
        try:
            with self.store.writing():
                yield
        except BaseException:
            staged, self._staged = self._staged, None
            self._marks = []
            for write in staged:
                write.staged.abandon()
            raise
        staged, self._staged = self._staged, None
        marks, self._marks = self._marks, []
        if staged:
            files.crashpoint("write.after_commit")  # committed, no file replaced yet
        for done, write in enumerate(staged):
            try:
                self._finish(write)
            except BaseException:  # the replaces not tried are redone by the next look
                for left in staged[done + 1 :]:  # at their files (their rows are committed)
                    left.staged.abandon()
                raise
        for mark in marks:  # each file now durably holds what its mark says (shared store)
            synced.write_mark(self.home, mark)
            self._marked[mark.path] = (mark.rev, mark.hash)

    def replace_file(
        self,
        rel: str,
        old: bytes | None,
        new: bytes,
        *,
        index: bool = True,
        hashes: tuple[str, str] | None = None,
    ) -> None:
        """Replace a managed file's bytes (inside ``writing``) and, with ``index``, index them
        as memkeeper's own write (no event).

        ``old`` is what memkeeper read (``None``: the file did not exist). The new bytes go
        to a temp file now and a ``pending`` row to the store; the rename follows the commit
        (``_finish``), without fsyncs: the commit made the write durable, and the row lets a
        replace that never happened be redone. The file must still hold ``old`` now — else
        ``files.Raced``, nothing is changed and the operation starts over (``retrying``) —
        and again at the rename (``_superseded`` otherwise). The replaced file is kept by a
        hard link in ``.memkeeper/kept/`` until ``settle_kept`` has seen that nobody wrote
        into it (an editor that opened it before the replace and saves after). ``hashes``:
        those of ``old`` and ``new``, when the caller has them."""
        assert self._staged is not None, "replace_file runs inside Workspace.writing()"
        old_hash: str | None = None
        if hashes is not None:
            old_hash, new_hash = hashes
        else:
            old_hash, new_hash = None if old is None else digest(old), digest(new)
        keep = None
        if old_hash is not None:
            keep = self._keep_path(rel, old_hash)
        if self.shared:  # the store keeps no pending rows for this root's files: a replace
            staged = files.stage(  # a power cut undid leaves a version the store had, which
                self.top, rel, new, expected=old, keep=keep, create=old is None, sync=old is None
            )  # the next look brings up to date (``_look_shared``); a new file is synced
            self._staged.append(_Replace(rel, staged, old, new))
            if index:
                self.index_file(rel, new, external=False)
            return
        self._checkpoint(rel)
        staged = files.stage(self.top, rel, new, expected=old, keep=keep, create=old is None)
        self._staged.append(_Replace(rel, staged, old, new))
        old_inode, old_mtime_ns, old_size = staged.identity or (None, None, None)
        write = PendingWrite(
            0, rel, old_inode, old_mtime_ns, old_size, old_hash,
            staged.temp_inode, new_hash, staged.temp, self.now(),
        )  # fmt: skip
        self.store.put_pending(write)
        if index:
            self.index_file(rel, new, external=False)

    def kept_dir(self) -> str:
        """``.memkeeper/kept/``, made if missing (looked for once per workspace)."""
        if self._kept_dir is None:
            kept_dir = os.path.join(self.home, names.KEPT_DIR)
            os.makedirs(kept_dir, exist_ok=True)
            self._kept_dir = kept_dir
        return self._kept_dir

    def _checkpoint(self, rel: str) -> None:
        """Before another replace of ``rel``: once enough earlier ones are pending (or the
        oldest is old enough), fsync the file they left and forget them. The rows of one file
        form a chain a power cut may cut anywhere; bounding it keeps the redo's choice (which
        earlier state the disk holds) small. Counted in this process (the store is asked only
        when a checkpoint is due): another process's replaces of the file add to the chain,
        each process bounding its own."""
        count, oldest = self._unsynced.get(rel, (0, self.now()))
        if count >= CHECKPOINT_WRITES or self.now() - oldest >= CHECKPOINT_S:
            if self.store.pending_count(rel)[0]:
                files.sync_file(self.top, rel)
                self.store.drop_pending(rel)
            count, oldest = 0, self.now()
        self._unsynced[rel] = (count + 1, oldest)

    def checkpoint(self, min_age: float = CHECKPOINT_S) -> list[str]:
        """Make durable the replaces committed at least ``min_age`` ago (each file's lock taken
        here): fsync each file that holds what the store committed and forget its pending rows.
        A file that holds anything else is left to the next look at it (``index_file``, which
        the daemon makes only once the file is quiet). Returns the paths checkpointed; the
        daemon calls this on its ticks."""
        if not self.has_store or self.shared:
            return []
        done = []
        for rel in self.store.pending_paths(self.now() - min_age):
            with self.locked(rel):
                try:
                    data = files.read_bytes(self.top, rel, whole=True)
                except (Invalid, files.Raced):
                    continue  # gone, or mid-save: the next look settles it
                with self.writing():
                    state = self.store.file_state(rel)
                    if state is None or state.file_hash != digest(data):
                        continue
                    files.sync_file(self.top, rel)
                    self.store.drop_pending(rel)
                done.append(rel)
        return done

    def _finish(self, write: _Replace) -> None:
        """The rename of a committed replace; a writer that takes no lock saved the file
        since the check (``files.Raced``) gets ``_superseded``."""
        keep = write.staged.keep
        base = None if keep is None or write.old is None else _base(keep, write.rel, write.old)
        try:
            write.staged.finish(base)
        except files.Raced as raced:
            self._superseded(write, raced.current)

    def _superseded(self, write: _Replace, current: bytes | None) -> None:
        """The store committed ``write`` but, at the rename, the file held another writer's
        save (``current``). Its save stays; memkeeper's committed change is merged into it
        where the two touched different sections — else the save stays alone in the file,
        memkeeper's bytes are kept in a ``save.raced`` event, and the operation starts over on
        the file as it is (``files.Raced``, for ``retrying``)."""
        rel = write.rel
        for _ in range(RACE_ATTEMPTS):
            try:
                with self.writing():
                    self.store.drop_pending(rel)
                    if current is None:  # deleted: the deletion is indexed by the next look
                        self.record("save.raced", rel, None, _lost(write.new), actor="external")
                        break
                    if self._take_over(rel, write.old, write.new, current):
                        return
                    break
            except files.Raced as raced:  # saved again meanwhile: merge into that save
                current = raced.current
        raise files.Raced(rel, current)

    def _take_over(self, rel: str, base: bytes | None, ours: bytes, theirs: bytes) -> bool:
        """Inside ``writing``: the file holds ``theirs`` where memkeeper committed ``ours``
        (made from ``base``; ``None``: unknown). Replace it with ``ours`` merged section by
        section into ``theirs`` (durably; True), or leave ``theirs`` and keep ``ours`` in a
        ``save.raced`` event (False); either way, index the file as an edit by ``external``."""
        from memkeeper.markdown.merge import merge_sections

        merged = None if base is None else merge_sections(base, theirs, ours, rel)
        detail = {"raced": True}
        if merged is not None and merged.data is not None:
            if merged.data != theirs:
                self._replace_now(rel, theirs, merged.data)
            self.index_file(rel, merged.data, actor="external", detail=detail)
            data = {"stage": "commit", "merged": True, "sections": list(merged.theirs)}
            self.record("save.raced", rel, None, data, actor="external")
            return True
        self.index_file(rel, theirs, actor="external", detail=detail)
        conflicts = [] if merged is None else list(merged.conflicts)
        self.record("save.raced", rel, None, _lost(ours, conflicts), actor="external")
        return False

    def _replace_now(self, rel: str, old: bytes, new: bytes) -> None:
        """Replace the file durably at once (temp and directory fsynced), guarded and kept
        like any replace: for the rare writes that are not a commit's (a redo, a merge)."""
        keep = self._keep_path(rel, digest(old))
        staged = files.stage(self.top, rel, new, expected=old, keep=keep, sync=True)
        staged.finish(_base(keep, rel, old))

    def _keep_path(self, rel: str, old_hash: str) -> str:
        """Where a replace of ``rel`` (holding bytes of ``old_hash``) keeps the replaced file."""
        made = time.time_ns()
        due = self._kept_due.get(rel)
        if due is not None:
            self._kept_due[rel] = min(due, made / 1e9 + KEEP_S)
        return os.path.join(self.kept_dir(), names.kept_name(rel, made, old_hash))

    def retrying(self, rel: str, attempt: Callable[[], T]) -> T:
        """Run ``attempt`` (an operation on ``rel`` under its lock) until its replace does not
        race a writer that takes no lock: each race is recorded (``save.raced``, stage
        ``before``), the writer's save stays on disk, and the operation starts over on it."""
        for tries in range(RACE_ATTEMPTS):
            try:
                return self.again(attempt)
            except files.Raced as raced:
                with self.store.writing():
                    data = {"stage": "before", "operation": "replace", "attempt": tries + 1}
                    self.record("save.raced", rel, None, data, actor="external")
                if raced.current is not None and tries + 1 < RACE_ATTEMPTS:
                    time.sleep(min(0.005 * 2**tries, 0.2))  # let the writer finish its save
        raise EnvironmentFailure(
            f"{rel}: another program kept rewriting it while memkeeper wrote — nothing was "
            "changed; try again once it is done",
            path=rel,
        )

    def again(self, attempt: Callable[[], T]) -> T:
        """Run ``attempt`` (a whole operation) until a shared store commits it: another
        writer that got in first (``StoreRetry``: nothing of the attempt was applied) makes
        it start over on what is there now, after a short random pause."""
        for tries in range(STORE_ATTEMPTS):
            try:
                return attempt()
            except StoreRetry:
                if tries + 1 == STORE_ATTEMPTS:
                    raise EnvironmentFailure(
                        f"the shared store: {STORE_ATTEMPTS} other writers got in first, one "
                        "after the other — nothing was changed; try again",
                        reason="store_busy",
                    ) from None
                import random

                time.sleep(random.uniform(0.0, min(0.001 * 2**tries, 0.05)))
        raise AssertionError("unreachable")

    def settle_kept(
        self, rel: str | None = None, *, now: float | None = None, min_age: float = QUIET_S
    ) -> list[str]:
        """Look at the files memkeeper replaced (of ``rel``, or all): one nobody wrote into
        is removed after ``KEEP_S``; one a writer saved into (after ``QUIET_S`` of quiet) has
        its save recovered — merged section by section into the file as it is now, or, where
        a section changed on both sides, kept whole in a ``save.raced`` event. The caller
        holds ``rel``'s lock (with ``rel=None``, each file's lock is taken here). Only links
        at least ``min_age`` old are looked at (younger ones can be neither removed nor quiet
        after a late save). Returns the paths whose saves were recovered."""
        kept_dir = os.path.join(self.home, names.KEPT_DIR)
        try:
            entries = sorted(e for e in os.listdir(kept_dir) if not e.endswith(BASE_SUFFIX))
        except FileNotFoundError:
            return []
        wanted = None if rel is None else names.kept_tag(rel)
        moment = time.time() if now is None else now
        found = []
        due = moment + min_age  # no link made after this listing is old enough before then
        for name in entries:  # by file, then oldest first
            if wanted is not None and not name.startswith(wanted):
                continue
            parsed = names.parse_kept(name)
            if parsed is None:
                continue
            if moment - parsed[1] / 1e9 < min_age:
                if wanted is not None:
                    due = min(due, parsed[1] / 1e9 + min_age)
                    break  # the rest of this file's links are younger still
                continue
            due = moment  # looked at, perhaps kept (a save not yet quiet): look again
            path = self._settle_one(kept_dir, name, parsed, moment, rel is None)
            if path is not None:
                found.append(path)
        if rel is not None and min_age == KEEP_S and now is None:
            self._kept_due[rel] = due
        return found

    def _settle_one(
        self, kept_dir: str, name: str, parsed: tuple[str, int, str], now: float, lock: bool
    ) -> str | None:
        link = os.path.join(kept_dir, name)
        age = now - parsed[1] / 1e9
        try:
            info = os.stat(link)
            seen = (info.st_mtime_ns, info.st_size)
            if age < KEEP_S and self._kept_seen.get(name) == seen:
                return None  # read before and unchanged since
            held = _read(link)
        except FileNotFoundError:
            return None  # another process settled it
        quiet = now - info.st_mtime >= QUIET_S
        if digest(held).removeprefix("sha256:")[:16] == parsed[2]:  # nobody wrote into it
            self._kept_seen[name] = seen
            if age >= KEEP_S:
                _unlink(link + BASE_SUFFIX)
                _unlink(link)
                self._kept_seen.pop(name, None)
            return None
        if not quiet:
            return None  # a writer is mid-save: look again later
        try:
            rel, _, base = self._base_of(link).partition(b"\0")
        except FileNotFoundError:  # its operation never got as far as the replace, or died
            if age >= ORPHAN_S:  # right after it: what was saved into it goes to an event
                self._orphan(name, parsed[0], held, lock)
                _unlink(link)
            return None
        path = rel.decode()
        with self.locked(path) if lock else contextlib.nullcontext():
            if not os.path.exists(link):
                return None  # another settler won
            try:
                self._recover(path, name, base, _read(link))
            except files.Raced:
                return None  # the file is being saved again right now: look again later
            _unlink(link + BASE_SUFFIX)
            _unlink(link)
        return path

    def _base_of(self, link: str) -> bytes:
        """What the kept file held before memkeeper replaced it (its ``.base``), waiting for
        this process's background jobs once if it is not written yet (``files.background``
        writes it just after the rename)."""
        try:
            return _read(link + BASE_SUFFIX)
        except FileNotFoundError:
            files.drain()
            return _read(link + BASE_SUFFIX)

    def _orphan(self, name: str, tag: str, held: bytes, lock: bool) -> None:
        """A kept link someone saved into whose ``.base`` was never written (its writer died
        between the rename and that write): the save cannot be merged without it, so its
        text is kept whole in a ``save.raced`` event of the file the link's tag names."""
        rel = next((p for p in self.store.indexed_paths() if names.kept_tag(p) == tag), None)
        if rel is None:
            return
        with self.locked(rel) if lock else contextlib.nullcontext(), self.writing():
            data = {"stage": "after", "merged": False, "conflicts": [], "kept": name}
            text = held.decode("utf-8", "replace")
            self.record("save.raced", rel, None, {**data, "text": text}, actor="external")

    def _recover(self, rel: str, name: str, base: bytes, theirs: bytes) -> None:
        """A save landed in a file memkeeper had replaced: bring it back."""
        from memkeeper.markdown.merge import merge_sections

        try:
            current: bytes | None = files.read_bytes(self.top, rel)
        except Invalid:
            current = None
        merged = None if current is None else merge_sections(base, theirs, current, rel)
        with self.writing():
            if merged is not None and merged.data is not None:
                assert current is not None
                if merged.data != current:  # guarded and kept like any replace: a save
                    self.replace_file(rel, current, merged.data, index=False)  # racing it
                    detail = {"raced": True}  # is recovered in turn
                    self.index_file(rel, merged.data, actor="external", detail=detail)
                data = {"stage": "after", "merged": True, "sections": list(merged.theirs)}
            else:
                conflicts = [] if merged is None else list(merged.conflicts)
                text = theirs.decode("utf-8", "replace")
                data = {"stage": "after", "merged": False, "conflicts": conflicts, "text": text}
            self.record("save.raced", rel, None, {**data, "kept": name}, actor="external")

    # -- indexing -------------------------------------------------------------------------------

    def refresh(
        self, rel: str, *, actor: str | None = None, detail: dict[str, Any] | None = None
    ) -> None:
        """Bring the index of ``rel`` up to date with the file on disk; ``actor`` and
        ``detail``: who made a change found, and how (see ``index_file``). A file another
        process has open for writing (a save in progress) is waited for briefly, then left
        as the index last saw it: a half-written state is never indexed. With a shared store,
        a look another writer got in first with (two roots indexing one file at once) starts
        over on what the store holds then — unless this runs inside another operation's
        transaction, whose own retry (``again``) it belongs to."""
        if self.shared and self._staged is None:
            self.again(lambda: self._refresh(rel, actor, detail))
        else:
            self._refresh(rel, actor, detail)

    def _refresh(self, rel: str, actor: str | None, detail: dict[str, Any] | None) -> None:
        data = files.read_bytes(self.top, rel)
        state = self.store.file_state(rel)
        if state is not None and state.file_hash == digest(data):
            self.seen_agreeing(rel, state, data)
            return
        with self.locked(rel):
            for tries in range(REFRESH_ATTEMPTS):
                try:
                    data = files.read_bytes(self.top, rel, whole=True)
                    with self.writing():
                        self.index_file(rel, data, actor=actor, detail=detail)
                    return
                except files.Raced:
                    time.sleep(0.01 * (tries + 1))

    def index_file(
        self,
        rel: str,
        data: bytes,
        *,
        external: bool = True,
        actor: str | None = None,
        detail: dict[str, Any] | None = None,
        push: bool = False,
    ) -> Document | None:
        """Index a change memkeeper did not make (``external=False``: one it just wrote, which
        records no event). Its ``section.external_edit`` events name ``actor`` when known (the
        Claude Code hook knows which agent's tool made it), else ``external``, and carry
        ``detail`` in their data. A replace the store committed but the file does not show
        is settled first (``_settle_pending``). Call under the file lock, inside writing()."""
        state = self.store.file_state(rel)
        file_hash = digest(data)
        if state is not None and state.file_hash == file_hash:
            if self.shared:
                self.agreed(rel, state.file_rev, file_hash, data)
            return None
        if self.shared and external and state is not None and not push:
            found = self._look_shared(rel, data, file_hash, state)
            if found is None:
                return None
            data, file_hash = found, digest(found)
        elif external and state is not None and not self._staging(rel):
            settled = self._settle_pending(rel, data, file_hash)
            if settled is None:
                return None
            if settled is not data:
                data, file_hash = settled, digest(settled)
                if state.file_hash == file_hash:
                    return None
        from memkeeper.markdown import revisions
        from memkeeper.markdown.sections import split

        doc = split(data, rel)
        previous = self.store.sections(rel, with_absent=True)
        change = revisions.reindex(previous, doc)
        self.store.put_sections(rel, change.rows)
        self.put_file(rel, FileState(1 if state is None else state.file_rev + 1, file_hash), data)
        if external and state is not None:
            self._note_external(rel, previous, change, data, actor, detail or {})
        return doc

    def put_file(self, rel: str, state: FileState, data: bytes) -> None:
        """Store the file's new state (its bytes are ``data``); with a shared store, also
        remember that version (other roots' files may hold it later: a checkout, a clone) and
        that this root's file holds it once the transaction is done."""
        self.store.put_file(rel, state)
        if self.shared:
            self.store.keep_version(rel, state.file_hash, state.file_rev)
            self.agreed(rel, state.file_rev, state.file_hash, data)

    # -- a shared store: this root's files and the store's -----------------------------------

    def seen_agreeing(self, rel: str, state: FileState, data: bytes) -> None:
        """With a shared store: a read found ``rel`` holding the store's version ``state``
        (``data``); remember it now, as the base of this root's next edit of the file."""
        if not self.shared or self._marked.get(rel) == (state.file_rev, state.file_hash):
            return
        mark = self._mark(rel)
        if mark is not None and (mark.rev, mark.hash) == (state.file_rev, state.file_hash):
            return
        prepare_home(self.home)  # its .gitignore first: git never sees the marks
        held = rel in self._editing  # (the caller holds the file's lock)
        with contextlib.nullcontext() if held else self.locked(rel):
            # Again under the lock, which every writer of this root holds until its own mark
            # is written: the file still holding ``state``'s bytes makes the mark true, even
            # over a newer one (a write that ended meanwhile changed the file: no mark then).
            try:
                if digest(files.read_bytes(self.top, rel)) != state.file_hash:
                    return  # changed since it was read: the next look decides
            except (Invalid, files.Raced):
                return
            synced.write_mark(self.home, synced.Mark(rel, state.file_rev, state.file_hash, data))
            self._marked[rel] = (state.file_rev, state.file_hash)

    def agreed(self, rel: str, file_rev: int, file_hash: str, data: bytes) -> None:
        """Once the open transaction has committed and its replaces are done, remember that
        ``rel`` holds ``data``, the store's version ``file_rev`` of it (``synced``)."""
        if self._marked.get(rel) != (file_rev, file_hash):
            self._marks = [m for m in self._marks if m.path != rel]
            self._marks.append(synced.Mark(rel, file_rev, file_hash, data))

    def committed(self, rel: str) -> bytes:
        """The file's bytes as the store holds them (every section's heading and body)."""
        return b"".join(row.heading + row.body for row in self.store.sections(rel))

    def _look_shared(self, rel: str, data: bytes, file_hash: str, state: FileState) -> bytes | None:
        """``rel`` holds ``data``, which is not the store's version of it (another root
        changed it, or this one did, or both). Returns the bytes to index as this root's edit
        (``None``: nothing to push).

        - The file holds what it held when it last agreed with the store (``synced``), or a
          version the store had before (a checkout, a clone made earlier): it is brought up to
          date, replaced by the store's bytes — no edit of this root's.
        - It was edited here, and the store did not move since: the edit is pushed (indexed
          like any external edit, by compare-and-swap: a store that moves meanwhile makes the
          operation start over).
        - Both moved: merged section by section with the version they last agreed on as the
          base; where one section changed on both sides, the file keeps this root's text, and
          a reconciliation of the file and the store is opened (``diverged``)."""
        committed = self.committed(rel)
        mark = self._mark(rel)
        older = self.store.version_rev(rel, file_hash)
        stale = rel in self._editing  # an operation holds these bytes: start it over
        if (mark is not None and mark.hash == file_hash) or (
            older is not None and older < state.file_rev and self._git_wrote(rel, mark)
        ):
            if stale:
                raise _Behind(f"{rel}: another root changed it")
            self.replace_file(rel, data, committed, index=False)
            self.agreed(rel, state.file_rev, state.file_hash, committed)
            return None
        if mark is not None and mark.rev == state.file_rev:
            return data
        if mark is not None and mark.data:
            from memkeeper.markdown.merge import merge_sections

            merged = merge_sections(mark.data, committed, data, rel)
            if merged.data is not None:
                if merged.data != data:
                    if stale:
                        raise _Behind(f"{rel}: the store moved while this root edited it")
                    self.replace_file(rel, data, merged.data, index=False)
                return merged.data
        if stale:
            raise _Behind(f"{rel}: the store moved while this root edited it")
        self._diverge(rel, data, committed)
        return None

    def sync_file(self, rel: str) -> None:
        """Under ``rel``'s lock, with a shared store: bring the file up to date with the
        store (``_look_shared``) — creating it when another root made it and this one never
        had it — or push what was edited here, in a transaction of its own."""

        try:
            file_class = self.rule(rel).file_class
        except PolicyInvalid:
            return  # which class it is cannot be told: nothing goes to the store, or comes
        if file_class in (None, "private"):
            return  # a private file's text never goes to the store, nor comes from it

        def once() -> None:
            with self.writing():
                if os.path.lexists(os.path.join(self.top, rel)):
                    self.index_file(rel, files.read_bytes(self.top, rel, whole=True))
                    return
                state = self.store.file_state(rel)
                if state is None or self._mark(rel) is not None:
                    return  # unknown to the store, or deleted here: nothing to bring
                committed = self.committed(rel)
                self.replace_file(rel, None, committed, index=False)
                self.agreed(rel, state.file_rev, state.file_hash, committed)

        self.again(once)

    def _refuse_diverged(self, rel: str) -> None:
        found = self.diverged(rel)
        if found is not None:
            raise Refused(
                f"{rel}: this root's copy and the shared store's both changed the same "
                f"section — nothing was written; see `memkeeper reconcile show {found}`, then "
                f"`memkeeper reconcile resolve {found} --keep-local` (push this root's file) "
                "or `--take-store` (take the store's)",
                reason="diverged",
                path=rel,
                id=found,
            )

    def unchanged_here(self, rel: str, file_hash: str) -> bool:
        """With a shared store: whether ``rel`` holds what it held when it last agreed with
        the store (``file_hash`` is its bytes' hash) — no edit of this root's."""
        mark = self._mark(rel)
        return mark is not None and mark.hash == file_hash

    def _git_wrote(self, rel: str, mark: synced.Mark | None) -> bool:
        """Whether ``rel``, holding an older version of the store's, got it from git (a clone
        made earlier, a checkout, a pull) rather than from a human undoing an edit: on a
        first look (no mark) always; else when git's index still records the file as git
        wrote it."""
        if mark is None:
            return True
        from pathlib import Path

        from memkeeper.fs.git import Git

        return Git(Path(self.top)).wrote(rel)

    def _mark(self, rel: str) -> synced.Mark | None:
        mark = synced.read_mark(self.home, rel)
        if mark is not None:
            self._marked[rel] = (mark.rev, mark.hash)
        return mark

    def shared_region(self) -> str:
        """The region name of this root's reconciliations with the shared store."""
        return SHARED_REGION + self.root_id()

    def _diverge(self, rel: str, data: bytes, committed: bytes) -> None:
        """Open (once) the reconciliation of this root's ``rel`` and the store's version."""
        region = self.shared_region()
        local, stored = data.decode("utf-8", "replace"), committed.decode("utf-8", "replace")
        row, opened = self.store.open_reconciliation(
            rel, region, local, stored, self.agent, iso_utc(self.now())
        )
        if opened:
            self.record("reconcile.opened", rel, None, {"id": row.id, "region": region})

    def diverged(self, rel: str) -> int | None:
        """The open reconciliation of this root's ``rel`` with the shared store, if any."""
        region = self.shared_region()
        for row in self.store.reconciliations():
            if row.path == rel and row.region == region:
                return row.id
        return None

    def _staging(self, rel: str) -> bool:
        """Whether a replace of ``rel`` is staged in the open transaction (its row is not a
        replace to settle: it has not been tried yet)."""
        return self._staged is not None and any(w.rel == rel for w in self._staged)

    def _settle_pending(self, rel: str, data: bytes, file_hash: str) -> bytes | None:
        """The file holds ``data``, not what the store committed last: settle the replaces
        the store holds as pending for it. Returns the bytes to index as a change memkeeper
        did not make (``None``: settled and indexed here).

        - The file is, untouched, one that a pending replace was to replace (a crash between
          the commit and the rename; a power cut that lost renames not yet fsynced): the
          replace is redone, durably, with the committed bytes (event ``write.redone``).
        - The rename never happened (its temp file is still there) and another program's
          save is in the file: the save stays, memkeeper's committed bytes go to a
          ``save.raced`` event (``_take_over``).
        - Otherwise the replace happened and someone edited the file since: an ordinary
          external edit."""
        rows = self.store.pending(rel)
        if not rows:
            return data
        self.store.drop_pending(rel)
        last = rows[-1]
        where = files.identity(self.top, rel)
        committed = b"".join(row.heading + row.body for row in self.store.sections(rel))
        if digest(committed) != last.new_hash:
            return data  # the rows are older than the index: nothing of them to settle
        if where is not None and any(row.replaced(where, file_hash) for row in rows):
            files.remove_temp(self.top, rel, last.temp)  # its writer is gone: we hold the lock
            self._replace_now(rel, data, committed)
            redone = {"hash": last.new_hash, "found": file_hash}
            self.record("write.redone", rel, None, redone)
            return committed
        renamed = where is None or where[0] == last.new_inode
        if not renamed and files.temp_exists(self.top, rel, last.temp):
            files.remove_temp(self.top, rel, last.temp)
            self._take_over(rel, None, committed, data)
            return None
        return data

    def _note_external(
        self,
        rel: str,
        previous: list[SectionRow],
        change: Reindex,
        data: bytes,
        actor: str | None,
        detail: dict[str, Any],
    ) -> None:
        """Events for an edit memkeeper did not make: none for a private file; for history
        that was rewritten rather than extended, a ``policy.violation`` too."""
        file_class = self.rule(rel).file_class
        if file_class == "private":
            return
        if file_class == "append-only":
            self._note_rewrite(rel, previous, data)
        revs = {row.key: row.rev for row in change.rows}
        for key in change.changed:
            self.record(
                "section.external_edit",
                rel,
                key,
                {"rev": revs[key], "noticed_by": self.agent, **detail},
                actor=actor or "external",
            )

    def _note_rewrite(self, rel: str, previous: list[SectionRow], data: bytes) -> None:
        """Record ``policy.violation`` when ``data`` does not extend what the index last held."""
        from memkeeper.markdown import appendonly

        old = b"".join(row.heading + row.body for row in previous if row.present)
        line = appendonly.first_changed_line(old, data)
        if line is None:
            return
        self.record(
            "policy.violation",
            rel,
            None,
            {
                "rule": "append-only",
                "line": line,
                "message": f"{rel}:{line}: history was rewritten, not extended",
                "noticed_by": self.agent,
            },
            actor="external",
        )

    def section_row(self, rel: str, ref_key: str) -> SectionRow:
        """The present section ``ref_key`` names (exact key or unambiguous suffix)."""
        return self.indexed_section(rel, ref_key)[1]

    def indexed_section(self, rel: str, ref_key: str) -> tuple[FileState, SectionRow]:
        """The file's state and the present section ``ref_key`` names, read together: one
        statement when the reference names one section (the rest: ``refs.resolve_key``)."""
        found = self.store.section_candidates(rel, ref_key)
        exact = [hit for hit in found if hit[1].key == ref_key]
        if exact or len(found) == 1:
            return (exact or found)[0]
        from memkeeper.markdown import refs

        key = refs.resolve_key(rel, ref_key, self.store.section_keys(rel))  # raises, mostly
        hit = self.store.indexed_section(rel, key)
        assert hit is not None
        return hit

    # -- policy ---------------------------------------------------------------------------------

    def rule(self, rel: str, key: str | None = None) -> Verdict:
        """The policy's verdict for a file (and section), cached by the policy's hash."""
        policy_bytes, policy_hash = self._policy()
        cache_key = f"rule:{policy_hash}:{rel}#{key or ''}"
        verdict = self._verdicts.get(cache_key)
        if verdict is not None:
            return verdict
        cached = self._cached(cache_key) if self.has_store else None  # creates none
        if cached is not None:
            verdict = Verdict.from_json(json.loads(cached))
        else:
            from memkeeper.policy.loader import parse_policy

            verdict = parse_policy(policy_bytes).verdict(rel, key)
            if self.has_store:
                self._cache(cache_key, json.dumps(verdict.to_json()))
        self._verdicts[cache_key] = verdict
        return verdict

    def claim_ttls(self) -> tuple[int, int]:
        """The policy's ``leases:`` default and maximum TTL, cached by the policy's hash."""
        policy_bytes, policy_hash = self._policy()
        remembered = self._ttls.get(policy_hash)
        if remembered is not None:
            return remembered
        cache_key = f"leases:{policy_hash}"
        cached = self._cached(cache_key)
        if cached is None:
            from memkeeper.policy.loader import parse_policy

            policy = parse_policy(policy_bytes)
            cached = json.dumps([policy.default_ttl, policy.max_ttl])
            self._cache(cache_key, cached)
        default_ttl, max_ttl = json.loads(cached)
        self._ttls[policy_hash] = (int(default_ttl), int(max_ttl))
        return self._ttls[policy_hash]

    def _cached(self, key: str) -> str | None:
        """What the policy's cache holds for ``key``: the store's (SQLite), or with a shared
        store a file of this root's (``.memkeeper/policy-cache.json``: a policy's verdicts
        are this root's policy's, and asking the network for them would cost a round trip
        each and fail when it is down)."""
        if not self.shared:
            return self.store.cached(key)
        if self._local_cache is None:
            try:
                with open(os.path.join(self.home, POLICY_CACHE), encoding="utf-8") as handle:
                    loaded = json.load(handle)
                self._local_cache = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._local_cache = {}
        found = self._local_cache.get(key)
        return found if isinstance(found, str) else None

    def _cache(self, key: str, value: str) -> None:
        if not self.shared:
            self.store.cache(key, value)
            return
        if self._cached(key) == value:
            return
        prepare_home(self.home)
        assert self._local_cache is not None
        self._local_cache[key] = value
        where = os.path.join(self.home, POLICY_CACHE)
        temp = f"{where}.{os.getpid()}.tmp"
        with open(temp, "w", encoding="utf-8") as handle:
            json.dump(self._local_cache, handle)
        os.replace(temp, where)

    def _policy(self) -> tuple[bytes | None, str]:
        """The policy file's bytes (``None``: there is none) and a hash that tells the two
        apart, re-read only when its stat changes."""
        path = os.path.join(self.top, names.POLICY_FILE)
        try:
            info = os.stat(path)
            signature = (info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns)
        except FileNotFoundError:
            signature = None
        if self._policy_seen is None or self._policy_seen[0] != signature:
            data = None
            if signature is not None:
                with open(path, "rb") as handle:
                    data = handle.read()
            self._policy_seen = (signature, data, "none" if data is None else digest(data))
        return self._policy_seen[1], self._policy_seen[2]
