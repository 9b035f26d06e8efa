"""``WriteAhead``: the store as the write-ahead log of the files (reference §11).

A replace of a managed file inside ``Workspace.writing`` writes the new bytes to a temp file
and puts a ``pending`` row in the open transaction; the rename follows the commit, without
fsyncs of its own (the commit made the write durable). A replace the store committed but the
disk does not show (a crash between the two, a power cut that lost unsynced renames) is
redone on the next look at the file (``settle_pending``); a save another program made in
between stays, and is never overwritten. A writer that takes no lock and saves the file
between memkeeper's read and its rename makes the operation start over on its save
(``retrying``), or has memkeeper's committed change merged into it (``_superseded``).
"""

from __future__ import annotations

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.events import digest
from memkeeper.fs import files
from memkeeper.records import PendingWrite
from memkeeper.store.retry import Retry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from memkeeper.fs.atomic import Staged
    from memkeeper.ops.shape import WorkspaceShape

    T = TypeVar("T")
else:
    WorkspaceShape = object


RACE_ATTEMPTS = 20  # operations started over when a writer without the lock saved meanwhile
CHECKPOINT_WRITES = 32  # unsynced replaces of one file before the next write fsyncs them …
CHECKPOINT_S = 10.0  # … or once the oldest of them is this old


class Replace:
    """A replace staged in the open transaction: the file, its staged temp, the bytes it
    replaces (``None``: it creates the file) and the new ones."""

    __slots__ = ("rel", "staged", "old", "new")

    def __init__(self, rel: str, staged: Staged, old: bytes | None, new: bytes) -> None:
        self.rel, self.staged, self.old, self.new = rel, staged, old, new


def lost(ours: bytes, conflicts: list[str] | None = None) -> dict[str, Any]:
    """A ``save.raced`` event's data when memkeeper's committed bytes could not stay in the
    file: they are kept here, whole."""
    text = ours.decode("utf-8", "replace")
    return {"stage": "commit", "merged": False, "conflicts": conflicts or [], "text": text}


class WriteAhead(WorkspaceShape):
    """The part of a ``Workspace`` that replaces files after the store commits."""

    def __init__(self) -> None:
        self._staged: list[Replace] | None = None  # replaces waiting for writing()'s commit
        self._unsynced: dict[str, tuple[int, float]] = {}  # replaces since a checkpoint here
        # Runs each rename (file, the rename): the daemon's, to tell git's index of it at once
        self.rename_guard: Callable[[str, Callable[[], object], str], None] | None = None
        super().__init__()

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
        from memkeeper.fs import atomic

        assert self._staged is not None, "replace_file runs inside Workspace.writing()"
        old_hash: str | None = None
        if hashes is not None:
            old_hash, new_hash = hashes
        else:
            old_hash, new_hash = None if old is None else digest(old), digest(new)
        keep = None
        if old_hash is not None:
            keep = self.keep_path(rel, old_hash)
        if self.shared:
            # The store keeps no pending rows for this root's files: a replace a power cut
            # undid leaves a version the store had, which the next look brings up to date
            # (``look_shared``); a new file is synced.
            staged = atomic.stage(
                self.top, rel, new, expected=old, keep=keep, create=old is None, sync=old is None
            )
            self._staged.append(Replace(rel, staged, old, new))
            if index:
                self.index_file(rel, new, external=False)
            return
        self._checkpoint(rel)
        staged = atomic.stage(self.top, rel, new, expected=old, keep=keep, create=old is None)
        self._staged.append(Replace(rel, staged, old, new))
        old_inode, old_mtime_ns, old_size = staged.identity or (None, None, None)
        write = PendingWrite(
            0, rel, old_inode, old_mtime_ns, old_size, old_hash,
            staged.temp_inode, new_hash, staged.temp, self.now(),
        )  # fmt: skip
        self.store.put_pending(write)
        if index:
            self.index_file(rel, new, external=False)

    def writing_open(self) -> bool:
        """Whether a ``writing`` transaction is open (its replaces staged, not yet done)."""
        return self._staged is not None

    def staging(self, rel: str) -> bool:
        """Whether a replace of ``rel`` is staged in the open transaction (its row is not a
        replace to settle: it has not been tried yet)."""
        return self._staged is not None and any(w.rel == rel for w in self._staged)

    def begin_staging(self) -> None:
        """``writing`` opened its transaction: replaces are staged until it commits."""
        self._staged = []

    def abandon_staged(self) -> None:
        """``writing``'s transaction did not commit: no staged replace happens."""
        staged, self._staged = self._staged or [], None
        for write in staged:
            write.staged.abandon()

    def finish_staged(self) -> None:
        """``writing``'s transaction committed: do its replaces, in order. The replaces not
        tried when one fails are redone by the next look at their files (their rows are
        committed)."""
        from memkeeper.fs import crash

        staged, self._staged = self._staged or [], None
        if staged:
            crash.crashpoint("write.after_commit")  # committed, no file replaced yet
        for done, write in enumerate(staged):
            try:
                self._finish(write)
            except BaseException:
                for left in staged[done + 1 :]:
                    left.staged.abandon()
                raise

    def _checkpoint(self, rel: str) -> None:
        """Before another replace of ``rel``: once enough earlier ones are pending (or the
        oldest is old enough), fsync the file they left and forget them. The rows of one file
        form a chain a power cut may cut anywhere; bounding it keeps the redo's choice (which
        earlier state the disk holds) small. Counted in this process (the store is asked only
        when a checkpoint is due): another process's replaces of the file add to the chain,
        each process bounding its own."""
        from memkeeper.fs import atomic

        count, oldest = self._unsynced.get(rel, (0, self.now()))
        if count >= CHECKPOINT_WRITES or self.now() - oldest >= CHECKPOINT_S:
            if self.store.pending_count(rel)[0]:
                atomic.sync_file(self.top, rel)
                self.store.drop_pending(rel)
            count, oldest = 0, self.now()
        self._unsynced[rel] = (count + 1, oldest)

    def checkpoint(self, min_age: float = CHECKPOINT_S) -> list[str]:
        """Make durable the replaces committed at least ``min_age`` ago (each file's lock taken
        here): fsync each file that holds what the store committed and forget its pending rows.
        A file that holds anything else is left to the next look at it (``index_file``, which
        the daemon makes only once the file is quiet). Returns the paths checkpointed; the
        daemon calls this on its ticks."""
        from memkeeper.fs import atomic

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
                    atomic.sync_file(self.top, rel)
                    self.store.drop_pending(rel)
                done.append(rel)
        return done

    def _finish(self, write: Replace) -> None:
        """The rename of a committed replace; a writer that takes no lock saved the file
        since the check (``files.Raced``) gets ``_superseded``."""
        from memkeeper.fs import home

        keep = write.staged.keep
        base = None
        if keep is not None and write.old is not None:
            base = home.kept_base(keep, write.rel, write.old)
        try:
            if self.rename_guard is None:
                write.staged.finish(base)
            else:
                folder = write.rel.rpartition("/")[0]  # the staged file is beside the file
                temp = "/".join(p for p in (self.top, folder, write.staged.temp) if p)
                self.rename_guard(write.rel, lambda: write.staged.finish(base), temp)
        except files.Raced as raced:
            self._superseded(write, raced.current)

    def _superseded(self, write: Replace, current: bytes | None) -> None:
        """The store committed ``write`` but, at the rename, the file held another writer's
        save (``current``). Its save stays; memkeeper's committed change is merged into it
        where the two touched different sections — else the save stays alone in the file,
        memkeeper's bytes are kept in a ``save.raced`` event, and the operation starts over on
        the file as it is (``files.Raced``, for ``retrying``)."""
        rel = write.rel
        for _ in Retry(RACE_ATTEMPTS).tries():
            try:
                with self.writing():
                    self.store.drop_pending(rel)
                    if current is None:  # deleted: the deletion is indexed by the next look
                        self.record("save.raced", rel, None, lost(write.new), actor="external")
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
        self.record("save.raced", rel, None, lost(ours, conflicts), actor="external")
        return False

    def _replace_now(self, rel: str, old: bytes, new: bytes) -> None:
        """Replace the file durably at once (temp and directory fsynced), guarded and kept
        like any replace: for the rare writes that are not a commit's (a redo, a merge)."""
        from memkeeper.fs import atomic, home

        keep = self.keep_path(rel, digest(old))
        staged = atomic.stage(self.top, rel, new, expected=old, keep=keep, sync=True)
        staged.finish(home.kept_base(keep, rel, old))

    def retrying(self, rel: str, attempt: Callable[[], T]) -> T:
        """Run ``attempt`` (an operation on ``rel`` under its lock) until its replace does not
        race a writer that takes no lock: each race is recorded (``save.raced``, stage
        ``before``), the writer's save stays on disk, and the operation starts over on it."""
        # A pause lets the writer finish its save; none after a deletion, nor the last try.
        policy = Retry(RACE_ATTEMPTS, on=(files.Raced,), delay=0.005, max_delay=0.2)
        for tries in range(policy.attempts):
            try:
                return self.again(attempt)
            except files.Raced as raced:
                with self.store.writing():
                    data = {"stage": "before", "operation": "replace", "attempt": tries + 1}
                    self.record("save.raced", rel, None, data, actor="external")
                if raced.current is not None and tries + 1 < policy.attempts:
                    policy.sleep(policy.pause(tries))
        raise EnvironmentFailure(
            f"{rel}: another program kept rewriting it while memkeeper wrote — nothing was "
            "changed; try again once it is done",
            path=rel,
        )

    def settle_pending(self, rel: str, data: bytes, file_hash: str) -> bytes | None:
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
        from memkeeper.fs import atomic

        rows = self.store.pending(rel)
        if not rows:
            return data
        self.store.drop_pending(rel)
        last = rows[-1]
        where = files.identity(self.top, rel)
        committed = self.committed(rel)
        if digest(committed) != last.new_hash:
            return data  # the rows are older than the index: nothing of them to settle
        if where is not None and any(row.replaced(where, file_hash) for row in rows):
            atomic.remove_temp(self.top, rel, last.temp)  # its writer is gone: we hold the lock
            self._replace_now(rel, data, committed)
            redone = {"hash": last.new_hash, "found": file_hash}
            self.record("write.redone", rel, None, redone)
            return committed
        renamed = where is None or where[0] == last.new_inode
        if not renamed and atomic.temp_exists(self.top, rel, last.temp):
            atomic.remove_temp(self.top, rel, last.temp)
            self._take_over(rel, None, committed, data)
            return None
        return data
