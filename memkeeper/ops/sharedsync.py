"""``SharedSync``: with a shared store (reference §12), this root's files kept in line with
it — another root's changes brought in, this root's edits pushed, both merged when both
moved, a reconciliation opened where they cannot be.

What each file held when it last agreed with the store is its mark (``fs.synced``): the
base of the next merge, and what tells an edit of this root's from an old version the store
has moved on from. Marks are written once the transaction that agreed on them committed and
its replaces are done (``take_marks``, ``write_marks``). A ``Workspace`` makes its
``SharedSync`` only when its store is shared: a root with a SQLite store never imports this.
"""

from __future__ import annotations

import contextlib
import os

from memkeeper import names
from memkeeper.errors import Invalid, PolicyInvalid, Refused
from memkeeper.events import digest, iso_utc
from memkeeper.fs import files, home, synced
from memkeeper.store.retry import StoreRetry
from memkeeper.store.sqlite import prepare_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from memkeeper.ops.shape import WorkspaceShape
    from memkeeper.records import FileState


class Behind(Exception):
    """Inside an operation's transaction (``Workspace.editing``): the file is not the store's
    version and this root did not simply edit it — bring it up to date first (``sync_file``),
    then run the operation again. Nothing of the transaction is committed."""


class SharedSync:
    """This root's files and a shared store's, for one ``Workspace`` (``ws``)."""

    def __init__(self, ws: WorkspaceShape) -> None:
        self.ws = ws
        self._marks: list[synced.Mark] = []  # to remember once the commit and renames are done
        self._marked: dict[str, tuple[int, str]] = {}  # the marks this workspace knows

    # -- marks ----------------------------------------------------------------------------------

    def mark(self, rel: str) -> synced.Mark | None:
        """What ``rel`` held when it last agreed with the store (``None``: it never did)."""
        mark = synced.read_mark(self.ws.home, rel)
        if mark is not None:
            self._marked[rel] = (mark.rev, mark.hash)
        return mark

    def agreed(self, rel: str, file_rev: int, file_hash: str, data: bytes) -> None:
        """Once the open transaction has committed and its replaces are done, remember that
        ``rel`` holds ``data``, the store's version ``file_rev`` of it (``synced``)."""
        if self._marked.get(rel) != (file_rev, file_hash):
            self._marks = [m for m in self._marks if m.path != rel]
            self._marks.append(synced.Mark(rel, file_rev, file_hash, data))

    def take_marks(self) -> list[synced.Mark]:
        """The marks the committed transaction agreed on, to write once its replaces are done."""
        marks, self._marks = self._marks, []
        return marks

    def write_marks(self, marks: list[synced.Mark]) -> None:
        """Each file now durably holds what its mark says: remember it."""
        for mark in marks:
            synced.write_mark(self.ws.home, mark)
            self._marked[mark.path] = (mark.rev, mark.hash)

    def seen_agreeing(self, rel: str, state: FileState, data: bytes) -> None:
        """A read found ``rel`` holding the store's version ``state`` (``data``); remember it
        now, as the base of this root's next edit of the file."""
        if self._marked.get(rel) == (state.file_rev, state.file_hash):
            return
        mark = self.mark(rel)
        if mark is not None and (mark.rev, mark.hash) == (state.file_rev, state.file_hash):
            return
        ws = self.ws
        prepare_home(ws.home)  # its .gitignore first: git never sees the marks
        held = rel in ws._editing  # (the caller holds the file's lock)
        with contextlib.nullcontext() if held else ws.locked(rel):
            # Again under the lock, which every writer of this root holds until its own mark
            # is written: the file still holding ``state``'s bytes makes the mark true, even
            # over a newer one (a write that ended meanwhile changed the file: no mark then).
            try:
                if digest(files.read_bytes(ws.top, rel)) != state.file_hash:
                    return  # changed since it was read: the next look decides
            except (Invalid, files.Raced):
                return
            synced.write_mark(ws.home, synced.Mark(rel, state.file_rev, state.file_hash, data))
            self._marked[rel] = (state.file_rev, state.file_hash)

    def unchanged_here(self, rel: str, file_hash: str) -> bool:
        """Whether ``rel`` holds what it held when it last agreed with the store
        (``file_hash`` is its bytes' hash) — no edit of this root's."""
        mark = self.mark(rel)
        return mark is not None and mark.hash == file_hash

    # -- an operation's file, behind the store --------------------------------------------------

    def check_behind(self, rel: str, data: bytes | None) -> None:
        """At the start of an operation's transaction on ``rel`` (``data``: its bytes, ``None``
        when missing): ``Behind`` when the store has the file and this root never had it (a
        file deleted here stays deleted)."""
        ws = self.ws
        ws.store.prefetch_file(rel)
        missing = data is None and ws.store.file_state(rel) is not None
        if missing and self.mark(rel) is None:
            raise Behind(f"{rel}: the store has it, this root never had it")

    @contextlib.contextmanager
    def catching_up(self, rel: str) -> Iterator[None]:
        """Around an operation's transaction on ``rel``: when another root changed the file
        (``Behind``), bring it here, then start the operation over (``StoreRetry``)."""
        try:
            yield
        except Behind:
            self.ws._editing.discard(rel)
            self.sync_file(rel)
            self.refuse_diverged(rel)
            raise StoreRetry(f"{rel}: brought up to date with the store; again") from None

    def look(self, rel: str, data: bytes, file_hash: str, state: FileState) -> bytes | None:
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
        ws = self.ws
        committed = ws.committed(rel)
        mark = self.mark(rel)
        older = ws.store.version_rev(rel, file_hash)
        stale = rel in ws._editing  # an operation holds these bytes: start it over
        if (mark is not None and mark.hash == file_hash) or (
            older is not None and older < state.file_rev and self._git_wrote(rel, mark)
        ):
            if stale:
                raise Behind(f"{rel}: another root changed it")
            ws.replace_file(rel, data, committed, index=False)
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
                        raise Behind(f"{rel}: the store moved while this root edited it")
                    ws.replace_file(rel, data, merged.data, index=False)
                return merged.data
        if stale:
            raise Behind(f"{rel}: the store moved while this root edited it")
        self._diverge(rel, data, committed)
        return None

    def sync_file(self, rel: str) -> None:
        """Under ``rel``'s lock: bring the file up to date with the store (``look``) —
        creating it when another root made it and this one never had it — or push what was
        edited here, in a transaction of its own."""
        ws = self.ws
        try:
            file_class = ws.rule(rel).file_class
        except PolicyInvalid:
            return  # which class it is cannot be told: nothing goes to the store, or comes
        if file_class in (None, "private"):
            return  # a private file's text never goes to the store, nor comes from it

        def once() -> None:
            with ws.writing():
                if os.path.lexists(os.path.join(ws.top, rel)):
                    ws.index_file(rel, files.read_bytes(ws.top, rel, whole=True))
                    return
                state = ws.store.file_state(rel)
                if state is None or self.mark(rel) is not None:
                    return  # unknown to the store, or deleted here: nothing to bring
                committed = ws.committed(rel)
                ws.replace_file(rel, None, committed, index=False)
                self.agreed(rel, state.file_rev, state.file_hash, committed)

        ws.again(once)

    def _git_wrote(self, rel: str, mark: synced.Mark | None) -> bool:
        """Whether ``rel``, holding an older version of the store's, got it from git (a clone
        made earlier, a checkout, a pull) rather than from a human undoing an edit: on a
        first look (no mark) always; else when git's index still records the file as git
        wrote it."""
        if mark is None:
            return True
        from pathlib import Path

        from memkeeper.fs.git import Git

        return Git(Path(self.ws.top)).wrote(rel)

    # -- reconciliations ------------------------------------------------------------------------

    def root_id(self) -> str:
        """This root's name among the roots sharing the store: made once, kept in the home."""
        found = home.read_root_id(self.ws.home)
        if found is not None:
            return found
        prepare_home(self.ws.home)
        return home.make_root_id(self.ws.home) or self.root_id()

    def region(self) -> str:
        """The region name of this root's reconciliations with the shared store."""
        return names.SHARED_REGION + self.root_id()

    def _diverge(self, rel: str, data: bytes, committed: bytes) -> None:
        """Open (once) the reconciliation of this root's ``rel`` and the store's version."""
        ws = self.ws
        region = self.region()
        local, stored = data.decode("utf-8", "replace"), committed.decode("utf-8", "replace")
        row, opened = ws.store.reconciliations.open_reconciliation(
            rel, region, local, stored, ws.agent, iso_utc(ws.now())
        )
        if opened:
            ws.record("reconcile.opened", rel, None, {"id": row.id, "region": region})

    def diverged(self, rel: str) -> int | None:
        """The open reconciliation of this root's ``rel`` with the shared store, if any."""
        region = self.region()
        for row in self.ws.store.reconciliations.reconciliations():
            if row.path == rel and row.region == region:
                return row.id
        return None

    def refuse_diverged(self, rel: str) -> None:
        """``Refused`` when this root's ``rel`` and the store's diverged (``diverged``)."""
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
