"""Git's index kept up with the live pages the daemon rewrites (docs/reference.md §11,
"Generated pages and git").

With the clean filter, a re-rendered page holds what git stores — but git trusts its index's
stat data: a page whose size or times changed is modified for ``status`` until it compares
it, and for ``checkout`` or ``rebase`` (which compare nothing) a change they refuse to
overwrite. So the daemon renames a live page into place while holding git's ``index.lock``
and, in the same hold, gives the page's index entry the new file's stat data when what git
would store of it is the blob the entry names (``daemon.indexfile``): every git step sees the
page and its entry agree. The blob, and so what is staged, stays as it was.

The index is git's: this takes ``index.lock`` exactly as git does (created exclusively),
writes the new index into it and renames it over the index, holding it for a rename and a
read and write of the index, with no process started. Held by git, it is tried again every
5 ms for up to 0.1 s; then the page is renamed anyway and its entry brought up to date on a
later tick — git, meanwhile, may call the page modified.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import TYPE_CHECKING

from memkeeper.daemon.indexfile import refreshed, stat_of
from memkeeper.daemon.plan import GIT_BUSY
from memkeeper.errors import Invalid
from memkeeper.fs.root import working_tree
from memkeeper.regions.gitform import stored

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from memkeeper.daemon.indexfile import Stat
    from memkeeper.daemon.plan import Known
    from memkeeper.policy.model import Policy

LOCK_TRIES = 20  # 5 ms apart


def update_index(
    git_dir: str,
    files: Callable[[], Mapping[bytes, tuple[Stat, bytes]]],
    *,
    rename: Callable[[], object] | None = None,
    tries: int = 1,
    sleep: Callable[[float], object] = time.sleep,
) -> bool | None:
    """Under git's ``index.lock``: ``rename`` (a page into place), then the entries of
    ``files()`` (paths from the top of the working tree: stat data, stored form) refreshed
    (``indexfile.refreshed``). True when the index was rewritten, None when nothing needed
    it (``rename`` done), False when git held its lock ``tries`` times (``rename`` not done)."""
    index = os.path.join(git_dir, "index")
    lock = index + ".lock"
    for attempt in range(tries):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            if attempt + 1 == tries:
                return False
            sleep(0.005)
    committed = False
    try:
        if rename is not None:
            rename()
        try:
            with open(index, "rb") as handle:
                new = refreshed(handle.read(), files())
        except FileNotFoundError:
            return None  # no index: nothing is tracked yet
        if new is None:
            return None
        with os.fdopen(os.dup(fd), "wb") as out:
            out.write(new)
        os.replace(lock, index)
        committed = True
        return True
    finally:
        os.close(fd)
        if not committed:
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
    """The live pages of one root and the index entries still to bring up to date."""

    def __init__(self, root: str, git_dir: str | None) -> None:
        top = working_tree(root)
        self.root = root
        self.git_dir = git_dir if top is not None else None
        prefix = "" if top is None else os.path.relpath(root, top).replace(os.sep, "/")
        self.prefix = "" if prefix in ("", ".") else prefix + "/"
        self.owed: set[str] = set()

    def files(self, rels: Iterable[str]) -> dict[bytes, tuple[Stat, bytes]]:
        """Each page's stat data and what git stores of it (pages gone or with broken
        markers left out)."""
        found: dict[bytes, tuple[Stat, bytes]] = {}
        for rel in rels:
            path = os.path.join(self.root, rel)
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
                    info = os.fstat(handle.fileno())
                form = stored(data, rel)
            except (OSError, Invalid):
                continue
            stat = stat_of(info.st_ctime_ns, info.st_mtime_ns, info.st_dev, info.st_ino,
                           info.st_uid, info.st_gid, info.st_size)  # fmt: skip
            found[os.fsencode(self.prefix + rel)] = (stat, form)
        return found

    def flush(self) -> bool:
        """Bring the owed entries up to date, unless git holds its index now; True when the
        index was rewritten."""
        if not self.owed or self.git_dir is None:
            return False
        owed = sorted(self.owed)
        done = update_index(self.git_dir, lambda: self.files(owed))
        if done is not False:
            self.owed.clear()
        return done is True


class GitAware:
    """The daemon's part that watches git: whether git is working in the tree, and the live
    pages whose index entries git must look at again."""

    root: str
    git_dir: str | None
    quiet_s: float
    git_busy: bool  # git is working in the tree (as of the last batch)
    git_seen: float  # when git was last seen working
    stale: Stale
    own_index: tuple[int, int, int] | None  # the index as the daemon last wrote it
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

    def _rename_live(self, rel: str, rename: Callable[[], object]) -> None:
        """Rename a page into place; a live page under git's index lock, its entry brought
        up to date in the same hold (or on a later tick, when git holds the lock)."""
        if self.stale.git_dir is None or rel not in self._live_pages():
            rename()
            return
        git_dir = self.stale.git_dir
        files = lambda: self.stale.files([rel])  # noqa: E731
        done = update_index(git_dir, files, rename=rename, tries=LOCK_TRIES)
        if done is False:
            rename()
            self.stale.owed.add(rel)
        elif done:
            self.own_index = self._index_id()

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
