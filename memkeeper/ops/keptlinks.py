"""``KeptLinks``: the files memkeeper replaced, kept by a hard link in ``.memkeeper/kept/``
for an editor that opened one before the replace and saves after.

A replace (``ops.writeahead``) links the file it replaces to a keep path and, should the
link stay (a process had the file open for writing), writes a ``.base`` beside it: the
file's path and the bytes it held. Settling a link: one nobody wrote into goes after
``KEEP_S``; one a writer saved into (once ``QUIET_S`` quiet) has its save recovered —
merged section by section into the file as it is now, or, where a section changed on both
sides, kept whole in a ``save.raced`` event; one whose ``.base`` was never written (its
writer died right after the rename) has what was saved into it kept in an event after
``ORPHAN_S``.
"""

from __future__ import annotations

import contextlib
import os
import time

from memkeeper import names
from memkeeper.errors import Invalid
from memkeeper.events import digest
from memkeeper.fs import files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.ops.shape import WorkspaceShape
else:
    WorkspaceShape = object


KEEP_S = 2.0  # a replaced file is kept this long, for an editor that still had it open
QUIET_S = 1.0  # a kept file a writer saved into is recovered once quiet this long
ORPHAN_S = 30.0  # a kept link whose operation never replaced the file goes after this long


class KeptLinks(WorkspaceShape):
    """The part of a ``Workspace`` that keeps replaced files and recovers saves into them."""

    def __init__(self) -> None:
        self._kept_seen: dict[str, tuple[int, int]] = {}  # kept links read and found unchanged
        # file → the earliest time one of its kept links can be KEEP_S old (settle_kept)
        self._kept_due: dict[str, float] = {}
        self._kept_dir: str | None = None  # .memkeeper/kept/, once it is known to exist
        super().__init__()

    def kept_dir(self) -> str:
        """``.memkeeper/kept/``, made if missing (looked for once per workspace)."""
        if self._kept_dir is None:
            from memkeeper.fs import home

            self._kept_dir = home.make_kept_dir(self.home)
        return self._kept_dir

    def keep_path(self, rel: str, old_hash: str) -> str:
        """Where a replace of ``rel`` (holding bytes of ``old_hash``) keeps the replaced file."""
        made = time.time_ns()
        due = self._kept_due.get(rel)
        if due is not None:
            self._kept_due[rel] = min(due, made / 1e9 + KEEP_S)
        return os.path.join(self.kept_dir(), names.kept_name(rel, made, old_hash))

    def settle_due(self, rel: str) -> None:
        """Before an operation on ``rel`` (its lock held): a late save into a file replaced
        earlier comes back — not before one of its links can be old enough."""
        due = self._kept_due.get(rel, 0.0)
        if not 0 <= due - time.time() <= KEEP_S:
            self.settle_kept(rel, min_age=KEEP_S)

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
        from memkeeper.fs import home

        entries = home.kept_links(self.home)
        if entries is None:
            return []
        if rel is None:  # links another process removed are forgotten: a daemon's memory
            listed = set(entries)  # does not grow with the replaces it has seen
            self._kept_seen = {k: v for k, v in self._kept_seen.items() if k in listed}
        kept_dir = os.path.join(self.home, names.KEPT_DIR)
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
        from memkeeper.fs import home

        link = os.path.join(kept_dir, name)
        age = now - parsed[1] / 1e9
        try:
            info = os.stat(link)
            seen = (info.st_mtime_ns, info.st_size)
            if age < KEEP_S and self._kept_seen.get(name) == seen:
                return None  # read before and unchanged since
            held = home.read_bytes(link)
        except FileNotFoundError:
            self._kept_seen.pop(name, None)
            return None  # another process settled it
        quiet = now - info.st_mtime >= QUIET_S
        if digest(held).removeprefix("sha256:")[:16] == parsed[2]:  # nobody wrote into it
            self._kept_seen[name] = seen
            if age >= KEEP_S:
                home.drop_kept(link)
                self._kept_seen.pop(name, None)
            return None
        if not quiet:
            return None  # a writer is mid-save: look again later
        try:
            path, base = self._base_of(link)
        except FileNotFoundError:
            # Its operation never got as far as the replace, or died right after it: what
            # was saved into it goes to an event.
            if age >= ORPHAN_S:
                self._orphan(name, parsed[0], held, lock)
                home.drop_kept(link)
            return None
        with self.locked(path) if lock else contextlib.nullcontext():
            if not os.path.exists(link):
                return None  # another settler won
            try:
                self._recover(path, name, base, home.read_bytes(link))
            except files.Raced:
                return None  # the file is being saved again right now: look again later
            home.drop_kept(link)
        return path

    def _base_of(self, link: str) -> tuple[str, bytes]:
        """The file a kept link kept and what it held before memkeeper replaced it (its
        ``.base``), waiting for this process's background jobs once if it is not written yet
        (``background.submit`` writes it just after the rename)."""
        from memkeeper.fs import home

        try:
            return home.read_kept_base(link)
        except FileNotFoundError:
            from memkeeper.fs import background

            background.drain()
            return home.read_kept_base(link)

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
                # guarded and kept like any replace: a save racing it is recovered in turn
                if merged.data != current:
                    self.replace_file(rel, current, merged.data, index=False)
                    detail = {"raced": True}
                    self.index_file(rel, merged.data, actor="external", detail=detail)
                data = {"stage": "after", "merged": True, "sections": list(merged.theirs)}
            else:
                conflicts = [] if merged is None else list(merged.conflicts)
                text = theirs.decode("utf-8", "replace")
                data = {"stage": "after", "merged": False, "conflicts": conflicts, "text": text}
            self.record("save.raced", rel, None, {**data, "kept": name}, actor="external")
