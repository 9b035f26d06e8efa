"""The daemon's view of git (docs/reference.md §11): whether git is working in the tree, and
the live pages (``git: placeholder``, the clean filter installed) whose index entries it keeps
up with as it renames them into place (``fs.gitindex``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memkeeper.daemon.plan import GIT_BUSY
from memkeeper.fs.gitindex import LiveIndex, filter_installed

if TYPE_CHECKING:
    from collections.abc import Callable

    from memkeeper.daemon.plan import Known
    from memkeeper.policy.model import Policy


class GitAware:
    """The daemon's part that watches git: whether git is working in the tree, and the live
    pages whose index entries git must look at again."""

    root: str
    git_dir: str | None
    quiet_s: float
    git_busy: bool  # git is working in the tree (as of the last batch)
    git_seen: float  # when git was last seen working
    stale: LiveIndex
    own_index: tuple[int, int, int] | None  # the index as the daemon last wrote it
    policy: Policy
    known: Known

    def now(self) -> float:
        raise NotImplementedError

    def _watch_git(self, changed: bool) -> None:
        """Note whether git is working in the tree: something in its directory changed in
        this batch (not only the daemon's own write of its index), or it holds a lock or has an
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

    def _rename_live(self, rel: str, rename: Callable[[], object], staged: str) -> None:
        """Rename a page into place (from ``staged``); a live page under git's index lock,
        its entry brought up to date in the same hold (or on a later tick, when git holds
        the lock)."""
        if rel not in self._live_pages():
            rename()
        elif self.stale.rename(rel, rename, staged):
            self.own_index = self._index_id()

    def _git_settled(self) -> None:
        """Before a live page is staged: wait for a git command that has just started in the
        tree (``LiveIndex.wait_for_git``) — from the staging of a page to its rename, its
        change time is not the one its entry records."""
        if self._live_pages():
            self.stale.wait_for_git()

    def _git_running(self) -> bool:
        """Whether a git command that has just started works in the tree, with live pages
        here: git is working, as when its directory changes — the pages are rendered once
        it has been quiet for the quiet period. Not waited out: the render would then start
        the moment git ends, as the script or the person who ran it goes on (an edit of the
        page and a ``git commit -a`` at once would meet its mark, ``fs.gitindex``)."""
        if self.git_dir is None or not self._live_pages() or not self.stale.git_running():
            return False
        self.git_seen = self.now()
        return True

    def _flush_index(self) -> None:
        if self.stale.flush():
            self.own_index = self._index_id()

    def _live_pages(self) -> frozenset[str]:
        """The known generated files git stores placeholders of: their rule says so
        (``git: placeholder``) and the filter is installed — else git stores them as they
        are, and the daemon renders them after git's changes no more than any other page."""
        if self.git_dir is None or not filter_installed(self.root, self.git_dir):
            return frozenset()
        rules = ((rel, self.policy.classify(rel)) for rel in self.known.files)
        return frozenset(
            rel
            for rel, rule in rules
            if rule is not None and rule.file_class == "generated" and rule.git == "placeholder"
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
