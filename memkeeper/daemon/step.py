"""The watch daemon's executor: it looks at dirty paths, does what ``daemon.plan`` plans, and
returns what happened as ``Outcome`` values (it never prints).

- A human save of a managed file is indexed like any change memkeeper did not make:
  ``section.external_edit`` (rev + 1) and, for rewritten history, ``policy.violation``. A save
  of a generated file goes through ``regen`` for that file, which also opens a reconciliation
  for a hand-edited region and leaves that region alone.
- memkeeper's own writes (any process's) are skipped by hash: the index already holds them.
- Events recorded since the last batch (claims, patches, appends, emits, the daemon's own
  indexing) re-render every generated file; a claim due to expire is expired on time.
- A policy edit reloads the policy and re-lists the managed files; so does a directory coming
  or going, and a timer (new managed files in directories not watched yet).
- A change is indexed once it has been quiet for ``quiet_s``; while git works in the tree the
  daemon does nothing but note what changed, then indexes it as git's (``daemon.plan``).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from memkeeper.daemon.compaction import Compaction
from memkeeper.daemon.follow import OUTAGE_BACKOFF_MAX_S, Following, shared_store_watch
from memkeeper.daemon.gitindex import GitAware
from memkeeper.daemon.looking import Looking
from memkeeper.daemon.plan import (
    GIT_ACTOR,
    INDEX_QUIET_S,
    QUIET_S,
    Gone,
    Index,
    Known,
    Outcome,
    Pending,
    Reload,
    Rescan,
    Sweep,
    describe,
    live_due,
    plan,
    plan_files,
    prep_changes,
    regen_due,
    settle,
)
from memkeeper.daemon.watchdog import Watchdog
from memkeeper.errors import Invalid, MemkeeperError
from memkeeper.events import digest
from memkeeper.fs import files as fsio
from memkeeper.fs.git import git_dir
from memkeeper.fs.gitindex import LiveIndex
from memkeeper.names import POLICY_FILE
from memkeeper.ops.bulkindex import index_new
from memkeeper.ops.claims import ClaimTable
from memkeeper.ops.regen import regen, restore_live
from memkeeper.policy.loader import load_policy
from memkeeper.store.errors import StoreUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Set

    from memkeeper.daemon.plan import Action
    from memkeeper.markdown.sections import Document
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Event


FIRST_SEEN = "first seen, indexed"
REGEN_EVENTS = frozenset(
    {"region.regenerated", "reconcile.opened", "reconcile.resolved", "claim.expired"}
)


class Daemon(Following, GitAware, Looking):
    """The daemon's state between batches and the actions that change the world."""

    def __init__(self, ws: Workspace, rescan_s: float, *, quiet_s: float = QUIET_S) -> None:
        self.ws = ws
        self.root = os.path.abspath(ws.root)
        self.policy = load_policy(self.root)
        self.rescan_s = rescan_s
        self.quiet_s = quiet_s  # before a generated file is rendered; git's window
        self.index_quiet_s = min(quiet_s, INDEX_QUIET_S)  # before any other file is indexed
        self.known = Known(frozenset(), frozenset())
        self.watching: frozenset[str] = frozenset()
        self.last_event = 0
        self.pending: dict[str, Pending] = {}  # changes waiting for quiet
        self.git_dir = git_dir(self.root)
        self.git_busy, self.git_seen = False, float("-inf")  # (``GitAware``)
        self.stale, self.own_index = LiveIndex(self.root, self.git_dir), None
        ws.rename_guard = self._rename_live  # a live page's index entry kept up with it
        self.regen_owed = False  # a re-render is due but had to wait (for git)
        self.live_owed = False  # the same, of the live pages only (after git's changes)
        self._last_error = ""
        self.follow_owed: set[str] = set()  # files other roots changed, not brought here yet
        self.outage: tuple[float, int] | None = None  # the shared store down: (retry at, tries)
        self.expiry_asked = False  # the next expiry asked of the store since the last event
        self.missed: set[str] = set()  # changed paths batches brought while it was down
        self.left: dict[str, int | None] = {}  # the mtime each file had after ``_follow``
        self.store_watch = shared_store_watch(ws)  # shared store: read its events only when moved
        self.watchdog = Watchdog(ws, self.root)  # idle claims (``daemon.watchdog``)
        self.compaction = Compaction(ws)  # the event log's (``daemon.compaction``)
        self._list()

    # -- the daemon's life ---------------------------------------------------------------------

    def caught_up(self, *, first: bool) -> list[Outcome]:
        """Once a watch is up: index what changed while none was (before the start, during a
        restart); on the first, also expire due claims and render every region."""
        what = f"{len(self.known.files)} managed file(s), {len(self.known.dirs)} directories"
        head = Outcome("started", self.root, what) if first else Outcome("rewatched", None, what)
        try:
            done: list[Outcome] = []
            if first:
                self.last_event = self._head()  # what came before: the forced regen renders it
                # Files never indexed: in batches (``ops.bulkindex``), not one by one once quiet.
                rels = sorted(r for r in self.known.files if self._class(r) != "generated")
                done = [Outcome("indexed", r, FIRST_SEEN) for r in index_new(self.ws, rels)]
            done += self._scan() + (self._run(Sweep()) if first else [])
            if first:  # a mark left by a daemon killed mid-rename (``fs.gitindex``): cleared
                self.stale.owed.update(self._live_pages())
            return [head, *done, *self._settle(force=first)]
        except StoreUnavailable as exc:  # a shared store down: caught up once it answers
            if first:
                raise
            return [head, *self._down(exc, [])]

    def step(self, raw: Iterable[tuple[int, str]]) -> list[Outcome]:
        """One batch from the change source (empty: a quiet tick). Paths waiting for quiet
        are looked at again on every batch. A shared store that stops answering is tried
        again with back-off (0.2 s doubling to 5 s); once it answers, everything missed is
        caught up: every managed file looked at (``_scan``) and brought up to date."""
        changes = list(raw)
        try:
            if self.outage is not None:
                wait = self.outage[0] - self.now()  # (further off than the longest back-off:
                if 0 < wait <= OUTAGE_BACKOFF_MAX_S:  # the clock was stepped back, try now)
                    self.missed.update(path for _, path in changes)
                    return []
                self.ws.store.data_version()  # answers again?
                self.outage = None
                back = Outcome("synced", None, "the shared store answers again: catching up")
                missed, self.missed = self.missed, set()
                self.follow_owed |= set(self.known.files)
                done = [back, *self._scan()]
                return done + self._step([(0, path) for path in missed] + changes)
            return self._step(changes)
        except StoreUnavailable as exc:
            return self._down(exc, changes)

    def _step(self, raw: Iterable[tuple[int, str]]) -> list[Outcome]:
        batch = prep_changes(raw, self.root, self.git_dir)
        self._watch_git(batch.git)
        done: list[Outcome] = []
        if not self._git_window():  # a replaced file git is rewriting is settled after it
            done += [
                Outcome("recovered", rel, "a save into a file memkeeper had replaced")
                for rel in self.ws.settle_kept()
            ]
            self.ws.checkpoint()  # replaces committed a while ago: fsynced, their rows forgotten
        looks = [
            self._behind(self._look(path)) for path in sorted(batch.paths | self.pending.keys())
        ]
        for look in looks:  # changed back, deleted or no longer managed: nothing to wait for
            if look.kind != "file" or look.disk == look.indexed or look.file_class is None:
                self.pending.pop(look.path, None)
        claims = None if self.known.next_expiry is None else self.ws.claim_now()
        for action in plan(batch, looks, self.known, self.ws.now(), claims):
            done += self._run(action)
        back = {k.path for k in looks if k.kind == "file" and k.file_class not in (None, "private")}
        self.known = replace(self.known, files=self.known.files | back)
        done += self._settle(force=any(o.action == "reloaded" for o in done))
        done += self.watchdog.step(batch.paths, batch.git or batch.store, self.policy)
        return done + self.compaction.step(self.policy)

    def watch_paths(self) -> list[str]:
        """The directories to watch now, absolute (git's directory too: a change there means
        git is working); remembered for ``must_rewatch``."""
        self.watching = self.known.dirs | self.watchdog.dirs
        found = [os.path.join(self.root, d) if d else self.root for d in sorted(self.watching)]
        if self.git_dir is not None:
            found.append(self.git_dir)
        return [path for path in found if os.path.isdir(path)]

    def must_rewatch(self) -> bool:
        return self.known.dirs | self.watchdog.dirs != self.watching

    # -- actions -------------------------------------------------------------------------------

    def _run(self, action: Action) -> list[Outcome]:
        """Do one action; a failure is an ``error`` outcome (not repeated), never a crash."""
        try:
            return self._do(action)
        except MemkeeperError as exc:
            return self._failed(exc, getattr(action, "path", None))

    def _do(self, action: Action) -> list[Outcome]:
        if isinstance(action, Index):
            return self._index_when_quiet(action)
        if isinstance(action, Gone):
            self.known = replace(self.known, files=self.known.files - {action.path})
            return [Outcome("gone", action.path, "deleted or renamed away; watching for it")]
        if isinstance(action, Reload):
            return self._reload()
        if isinstance(action, Rescan):
            return self._scan()
        self.known = replace(self.known, next_expiry=None)
        self.expiry_asked = False  # asked again after the sweep
        return self._recorded(ClaimTable(self.ws).sweep, {"claim.expired"})

    def _index_when_quiet(self, action: Index) -> list[Outcome]:
        """Index a changed file once it has been quiet (``settle``); until then, remember it.
        Git's changes are indexed as git's, and a generated page git wrote is not re-rendered:
        the tree stays as git left it."""
        seen = self.pending.get(action.path)
        quiet = self.quiet_s if action.file_class == "generated" else self.index_quiet_s
        wait = settle(seen, action.disk, self.now(), quiet_s=quiet, git=self._git_window())
        if wait is not None:
            self.pending[action.path] = wait
            return []
        self.pending.pop(action.path, None)
        if seen is not None and seen.by_git:
            if action.file_class == "generated" and self._restored(action.path):
                return [Outcome("regenerated", action.path, "live regions put back after git")]
            return self._index(action.path, actor=GIT_ACTOR)
        if action.file_class == "generated":
            return self._index_generated(action.path)
        return self._index(action.path)

    def _index(self, rel: str, *, actor: str | None = None) -> list[Outcome]:
        """Index a change nobody told memkeeper about, under the file's lock."""
        ws = self.ws
        with ws.locked(rel):
            try:
                data = fsio.read_bytes(self.root, rel, whole=True)
            except Invalid:
                return []  # gone again: the next batch says so
            except fsio.Raced as raced:  # a save in progress: wait for quiet again
                disk = digest(raced.current) if raced.current is not None else ""
                self.pending[rel] = Pending(disk, self.now(), actor == GIT_ACTOR)
                return []

            def once() -> tuple[Document | None, list[Event]]:
                with ws.writing():
                    mark = self._head()
                    return ws.index_file(rel, data, actor=actor), ws.store.events(since=mark)

            try:
                doc, fresh = ws.again(once)
            except fsio.Raced as raced:  # saved again while a replace was redone: wait again
                disk = digest(raced.current) if raced.current is not None else ""
                self.pending[rel] = Pending(disk, self.now(), actor == GIT_ACTOR)
                return []
        self.known = replace(self.known, files=self.known.files | {rel})
        if doc is None:
            return []
        return [describe(e) for e in fresh] or [Outcome("indexed", rel, FIRST_SEEN)]

    def _index_generated(self, rel: str) -> list[Outcome]:
        """A generated file: index it, open a reconciliation for a hand-edited region, render
        the others (``regen`` of that file does all three)."""
        self.known = replace(self.known, files=self.known.files | {rel})
        wanted = {"section.external_edit", *REGEN_EVENTS}
        self._git_settled()
        try:
            done = self._recorded(lambda: regen(self.ws, rel), wanted)
        except MemkeeperError as exc:  # bad markers, say: still record the edit
            return [*self._failed(exc, rel), *self._index(rel)]
        return [o for o in done if o.path in (rel, None)]

    def _reload(self) -> list[Outcome]:
        self.policy = load_policy(self.root)  # a bad policy: an error, the old one stays
        found = self._scan()
        what = f"{len(self.known.files)} managed file(s), {len(self.known.dirs)} directories"
        return [Outcome("reloaded", POLICY_FILE, what), *found]

    def _scan(self) -> list[Outcome]:
        """List the managed files again: index changed ones, report vanished ones. A file
        whose stat stamp has not moved since memkeeper last read it is not read."""
        before = self.known.files
        looks = self._looks(sorted(self._list() | before))
        return [o for action in plan_files(looks, before) for o in self._run(action)]

    def _settle(self, *, force: bool) -> list[Outcome]:
        """Re-render regions after new events (or when ``force``d) unless git is working
        (then later); note the next expiry."""
        watch = self.store_watch
        if watch is not None and not force and not watch.moved.is_set():
            fresh: list[Event] = []  # nothing was recorded since: no round trip
        else:
            if watch is not None:
                watch.moved.clear()  # before the read: an event after it sets it again
            fresh = self.ws.store.events(since=self.last_event)
        done: list[Outcome] = self._follow(fresh)
        self.regen_owed = self.regen_owed or force or regen_due(fresh)
        self.live_owed = self.live_owed or live_due(fresh)  # git's own events too
        owed = self.regen_owed or self.live_owed
        if owed and not self._git_window() and not self._git_running():
            snapshots = frozenset() if self.regen_owed else self._snapshot_pages()
            self.regen_owed = self.live_owed = False
            done += self._regen(snapshots)  # its own events come back: quiet or idempotent
        self._flush_index()  # live pages renamed while git held its index
        if fresh:
            self.last_event = fresh[-1].id
        if fresh or force or not self.expiry_asked:  # (a new claim comes with its event)
            expiry = self.ws.store.earliest_expiry(self.ws.claim_now())
            self.known = replace(self.known, next_expiry=expiry)
            self.expiry_asked = True
        return done

    def _regen(self, snapshots: frozenset[str]) -> list[Outcome]:
        """Re-render every generated file but ``snapshots`` (after git's changes alone: a
        page git stores as rendered) and those with a change that is not indexed yet:
        someone else wrote them lately; they are indexed (and rendered) once quiet."""
        early, skip = self._unsettled_generated()
        try:
            done = self._recorded(lambda: regen(self.ws, None, skip=skip | snapshots), REGEN_EVENTS)
        except MemkeeperError as exc:
            return early + self._failed(exc, getattr(exc, "path", None))
        self._last_error = ""
        return early + done

    def _restored(self, rel: str) -> bool:
        """A page git wrote in its stored form given its live regions back (``restore_live``)."""
        try:
            with self.ws.locked(rel):
                done = restore_live(self.ws, rel)
        except (Invalid, fsio.Raced):  # gone, or being saved: indexed as usual
            return False
        return done

    def _failed(self, exc: MemkeeperError, path: str | None) -> list[Outcome]:
        """An ``error`` outcome, unless it repeats the last one word for word."""
        if exc.message == self._last_error:
            return []
        self._last_error = exc.message
        return [Outcome("error", path, exc.message)]

    def _unsettled_generated(self) -> tuple[list[Outcome], frozenset[str]]:
        """Generated files with a change not indexed yet, now waiting for quiet (and the
        outcomes of those that were quiet already, indexed here)."""
        done: list[Outcome] = []
        for rel in sorted(self.known.files - self.pending.keys()):
            if self._class(rel) == "generated":
                look = self._look(rel)
                if look.kind == "file" and look.disk != look.indexed:
                    done += self._index_when_quiet(Index(rel, "generated", look.disk or ""))
        return done, frozenset(self.pending)

    # -- events and the clock --------------------------------------------------------------------

    def _recorded(self, act: Callable[[], object], types: Set[str]) -> list[Outcome]:
        """Do ``act`` and describe the events of ``types`` recorded meanwhile."""
        mark = self._head()
        act()
        return [describe(e) for e in self.ws.store.events(since=mark) if e.type in types]

    def _head(self) -> int:
        last = self.ws.store.last_event()
        return 0 if last is None else last.id

    def now(self) -> float:
        return self.ws.now()
