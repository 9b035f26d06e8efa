"""The watch daemon with a shared store (reference §12): other roots' changes followed into
this root's files, and the store's outages waited out.

- The events of a shared store name the files other roots changed; each is brought up to
  date under its lock on the next tick (``_follow``), unless git is working, or a change
  made here waits for quiet or was written in the last second (its turn comes: it is
  indexed once quiet, with the store's changes). A file that differs from the store's
  version only because the store moved is no change made here (``_behind``).
- A store that stops answering is tried again with back-off (0.2 s doubling to 5 s); the
  changes meanwhile are kept for when it answers (``_down``).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from memkeeper.daemon.plan import Outcome
from memkeeper.errors import MemkeeperError
from memkeeper.fs import files as fsio
from memkeeper.store.errors import StoreUnavailable

if TYPE_CHECKING:
    from memkeeper.daemon.plan import Known, Look, Pending
    from memkeeper.daemon.storewatch import StoreWatch
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Event


def shared_store_watch(ws: Workspace) -> StoreWatch | None:
    """The etcd watch on the events of a shared store (None: the local store)."""
    if not ws.shared:
        return None
    from memkeeper.daemon.storewatch import StoreWatch
    from memkeeper.store.etcd import EtcdStore

    store = ws.store
    return StoreWatch(store) if isinstance(store, EtcdStore) else None


OUTAGE_BACKOFF_S, OUTAGE_BACKOFF_MAX_S = 0.2, 5.0  # a shared store down: tried again after
LATELY_S = 1.0  # a file written this recently is left alone (§15: not rewritten within 1 s)


class Following:
    """The part of the ``Daemon`` that follows a shared store."""

    if TYPE_CHECKING:
        ws: Workspace
        root: str
        known: Known
        pending: dict[str, Pending]
        follow_owed: set[str]  # files other roots changed, not brought here yet
        outage: tuple[float, int] | None  # the shared store down: (retry at, tries)
        missed: set[str]  # changed paths batches brought while it was down
        left: dict[str, int | None]  # the mtime each file had after ``_follow``

        def now(self) -> float: ...
        def _git_window(self) -> bool: ...
        def _class(self, rel: str) -> str | None: ...
        def _failed(self, exc: MemkeeperError, path: str | None) -> list[Outcome]: ...

    def _down(self, exc: StoreUnavailable, changes: list[tuple[int, str]]) -> list[Outcome]:
        """The shared store stopped answering: try again after a back-off, with the changes
        of this batch (and a full look at every file) once it answers."""
        tries = 1 if self.outage is None else self.outage[1] + 1
        pause = min(OUTAGE_BACKOFF_S * 2 ** (tries - 1), OUTAGE_BACKOFF_MAX_S)
        self.outage = (self.now() + pause, tries)
        self.missed.update(path for _, path in changes)
        return self._failed(exc, None)

    def _follow(self, fresh: list[Event]) -> list[Outcome]:
        """With a shared store (reference §12): bring the files the new events name up to
        date — what other roots patched comes into this root's files (``sync_file``). Not
        while git works, nor for a file changed here that waits for quiet or was written in
        the last second (its turn comes: it is indexed once quiet, with the store's changes)."""
        if not self.ws.shared:
            return []
        owed = self.follow_owed | {e.path for e in fresh if e.path is not None}
        self.follow_owed = set()
        if self._git_window():
            self.follow_owed = owed
            return []
        done = []
        for rel in sorted(owed):
            if self._class(rel) in (None, "private"):
                continue
            if rel in self.pending or self._touched_lately(rel):
                self.follow_owed.add(rel)
                continue
            try:
                with self.ws.locked(rel):
                    before = self._bytes(rel)
                    self.ws.sync_file(rel)
                    after = self._bytes(rel)
            except fsio.Raced:  # a save in progress: after it
                self.follow_owed.add(rel)
                continue
            except StoreUnavailable:  # the rest too: after the outage
                self.follow_owed |= {r for r in owed if r >= rel}
                raise
            except MemkeeperError as exc:
                done += self._failed(exc, rel)
                continue
            self.left[rel] = self._mtime(rel)
            if after != before:
                self.known = replace(self.known, files=self.known.files | {rel})
                what = "brought up to date with the shared store"
                done.append(Outcome("synced", rel, what))
        return done

    def _behind(self, look: Look) -> Look:
        """With a shared store, a file that differs from the store's version only because
        the store moved (the file is as it was when it last agreed with it) is no change made
        here: it is brought up to date this tick (``_follow``), not indexed after quiet."""
        if (
            self.ws.shared
            and look.kind == "file"
            and look.disk is not None
            and look.disk != look.indexed
            and self.ws.unchanged_here(look.path, look.disk)
        ):
            self.follow_owed.add(look.path)
            return replace(look, indexed=look.disk)
        return look

    def _touched_lately(self, rel: str) -> bool:
        """Written in the last second, by someone else than this daemon's ``_follow``."""
        changed = self._mtime(rel)
        if changed is None or changed == self.left.get(rel):
            return False
        return 0 <= time.time() - changed / 1e9 < LATELY_S

    def _mtime(self, rel: str) -> int | None:
        try:
            return os.lstat(os.path.join(self.root, rel)).st_mtime_ns
        except FileNotFoundError:
            return None

    def _bytes(self, rel: str) -> bytes | None:
        try:
            with open(os.path.join(self.root, rel), "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return None
