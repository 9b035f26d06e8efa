"""Git's index told to look again at the live pages the daemon rewrites (docs/reference.md
§11, "Generated pages and git").

With the clean filter, a re-rendered page holds what git stores — but git trusts its index's
stat data first, and a file whose *size* changed is modified for it without a look at its
content (``status`` lists it, a checkout over it is refused). An index entry whose size is 0
is one git always compares by content, through the filter (``daemon.indexfile``); the blob,
and so what is staged, stays as it was. The next ``git status`` finds the page clean and
records its stat data again, so the daemon does this just before a render (a git command
meanwhile then compares by content) and again just after it.

The index is git's: this takes ``index.lock`` exactly as git does (created exclusively — if
it exists, git is working: try again later), writes the new index into it and renames it
over the index, holding it for the time it takes to read and write the file, with no process
started; so no git command's own change of the index is lost.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from memkeeper.daemon.indexfile import smudged
from memkeeper.daemon.plan import GIT_BUSY
from memkeeper.fs.root import working_tree

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memkeeper.daemon.plan import Known
    from memkeeper.ops.regen import RegenResult
    from memkeeper.policy.model import Policy


def look_again(git_dir: str, paths: frozenset[bytes]) -> bool:
    """Set the index entries of ``paths`` (from the top of the working tree) to be compared
    by content: True when done (or nothing needs it), False when git holds its index lock —
    the caller tries again later."""
    index = os.path.join(git_dir, "index")
    lock = index + ".lock"
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except FileExistsError:
        return False
    renamed = False
    try:
        try:
            with open(index, "rb") as handle:
                new = smudged(handle.read(), paths)
        except FileNotFoundError:
            return True  # no index: nothing is tracked yet
        if new is None:
            return True
        with os.fdopen(os.dup(fd), "wb") as out:
            out.write(new)
        os.replace(lock, index)
        renamed = True
        return True
    finally:
        os.close(fd)
        if not renamed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)


def filter_installed(root: str, git_dir: str) -> bool:
    """Whether ``install-hooks`` set up the clean filter here: memkeeper's lines in the
    root's ``.gitattributes`` and its filter in the repository's config (read as files: no
    ``git`` process)."""
    common = git_dir
    with contextlib.suppress(OSError), open(os.path.join(git_dir, "commondir")) as handle:
        common = os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    try:
        with open(os.path.join(root, ".gitattributes"), "rb") as handle:
            attributes = handle.read()
        with open(os.path.join(common, "config"), "rb") as handle:
            config = handle.read()
    except OSError:
        return False
    return b"filter=memkeeper" in attributes and b'[filter "memkeeper"]' in config


class Stale:
    """The pages whose index entries still need ``look_again`` (git was busy)."""

    def __init__(self, root: str, git_dir: str | None) -> None:
        top = working_tree(root)
        self.git_dir = git_dir if top is not None else None
        self.prefix = "" if top is None else os.path.relpath(root, top).replace(os.sep, "/")
        self.owed: set[str] = set()

    def wrote(self, paths: Iterable[str]) -> None:
        self.owed.update(paths)

    def flush(self) -> None:
        """Tell git to look again at every page owed, unless git holds its index now."""
        if not self.owed or self.git_dir is None:
            return
        prefix = "" if self.prefix in ("", ".") else self.prefix + "/"
        paths = frozenset(os.fsencode(prefix + rel) for rel in self.owed)
        if look_again(self.git_dir, paths):
            self.owed.clear()


class GitAware:
    """The daemon's part that watches git: whether git is working in the tree, and the live
    pages whose index entries git must look at again."""

    root: str
    git_dir: str | None
    quiet_s: float
    git_busy: bool  # git is working in the tree (as of the last batch)
    git_seen: float  # when git was last seen working
    stale: Stale
    own_index: tuple[int, int, int] | None  # the index as the last ``look_again`` left it
    policy: Policy
    known: Known

    def now(self) -> float:
        raise NotImplementedError

    def _watch_git(self, changed: bool) -> None:
        """Note whether git is working in the tree: something in its directory changed in
        this batch (not only the daemon's own ``look_again``), or it holds a lock or has an
        operation in progress."""
        if self.git_dir is None:
            return
        here = self.git_dir
        held = any(os.path.lexists(os.path.join(here, n)) for n in GIT_BUSY)
        if changed and not held and self.own_index is not None:
            changed = self._index_id() != self.own_index
        self.git_busy = changed or held
        if self.git_busy:
            self.git_seen = self.now()

    def _git_window(self) -> bool:
        """Git is working, or was within the quiet period: index and render nothing."""
        now = self.now()
        if self.git_seen > now:  # the clock was stepped back: how long ago git worked is
            self.git_seen = float("-inf")  # unknown, and it is not working now (git_busy)
        return self.git_busy or now - self.git_seen < self.quiet_s

    def _wrote_live(self, paths: Iterable[str]) -> None:
        """The daemon rewrote these live pages (``git: placeholder``): git's index is told
        to look again at them now, or once git has finished."""
        self.stale.wrote(paths)
        if self.stale.owed and not self._git_window():
            self.stale.flush()
            if not self.stale.owed:
                self.own_index = self._index_id()

    def _wrote(self, results: list[RegenResult]) -> None:
        live = self._live_pages()
        self._wrote_live(r.path for r in results if r.written and r.path in live)

    def _live_pages(self) -> frozenset[str]:
        """The known generated files git stores placeholders of: their rule says so
        (``git: placeholder``) and the filter is installed — else git stores them as they
        are, and the daemon renders them after git's changes no more than any other page."""
        if self.git_dir is None or not filter_installed(self.root, self.git_dir):
            return frozenset()
        rules = ((rel, self.policy.classify(rel)) for rel in self.known.files)
        return frozenset(
            rel for rel, rule in rules if rule is not None and rule.git == "placeholder"
        )

    def _snapshot_pages(self) -> frozenset[str]:
        """The known generated files git stores as rendered (every one but the live pages)."""
        rules = ((rel, self.policy.classify(rel)) for rel in self.known.files)
        pages = {rel for rel, rule in rules if rule is not None and rule.file_class == "generated"}
        return frozenset(pages - self._live_pages())

    def _index_id(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(os.path.join(self.git_dir or "", "index"))
        except OSError:
            return None
        return info.st_ino, info.st_mtime_ns, info.st_size
