"""Git's index kept up with the live pages memkeeper rewrites (docs/reference.md §5,
"Generated pages and git").

With the clean filter, a re-rendered page holds what git stores — but git trusts its index's
stat data: a page whose size or times changed is modified for ``status`` until it compares
it, and for ``checkout`` or ``rebase`` (which compare nothing) a change they refuse to
overwrite. So a live page is renamed into place while memkeeper holds git's ``index.lock``
and, in the same hold, the page's index entry gets the new file's stat data when what git
would store of it is the blob the entry names (``fs.indexfile``): every git step sees the page
and its entry agree. The blob, and so what is staged, stays as it was.

The index is git's: this takes ``index.lock`` exactly as git does (created exclusively),
writes the new index into it and renames it over the index, holding it for a rename and a
read and write of the index, with no process started. Held by git, it is tried again every
5 ms for up to 0.1 s; then the page is renamed anyway and its entry brought up to date later
(``LiveIndex.owed``) — git, meanwhile, may call the page modified.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.fs.indexfile import refreshed, stat_of
from memkeeper.fs.root import working_tree
from memkeeper.regions.gitform import stored

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from memkeeper.fs.indexfile import Stat

LOCK_TRIES = 20  # 5 ms apart
# A git command that started this recently may have read the index and not yet looked at the
# files: a page is renamed once it ends, or once it is this old (it has then looked, or it is
# one that waits — a rebase for its editor — whose steps run later anyway).
GIT_STARTING_S = 3.0
GIT_POLL_S = 0.01
GIT_LOOKS = 3  # waits for git before a page is renamed anyway


class _GitStarted(Exception):
    """A git command started between the wait for git and the rename (``LiveIndex``)."""


def update_index(
    git_dir: str,
    files: Callable[[], Mapping[bytes, tuple[Stat, bytes]]],
    *,
    rename: Callable[[], object] | None = None,
    tries: int = 1,
    sleep: Callable[[float], object] = time.sleep,
    staged: Callable[[], Mapping[bytes, tuple[Stat, bytes]]] | None = None,
) -> bool | None:
    """Under git's ``index.lock``: ``rename`` (a page into place), then the entries of
    ``files()`` (paths from the top of the working tree: stat data, stored form) refreshed
    (``indexfile.refreshed``). True when the index was rewritten, None when nothing needed
    it (``rename`` done), False when git held its lock ``tries`` times (``rename`` not done).

    ``staged``: the entries as they will be once renamed (the staged file's stat data, which
    a rename keeps but for the change time). The new index is then written first and
    committed right after the rename, so that a ``git status`` (which takes no lock) never
    reads the old entry beside the new page for longer than between two renames; the change
    time follows in a second hold."""
    index = os.path.join(git_dir, "index")
    lock = index + ".lock"
    fd = _lock(lock, tries, sleep)
    if fd is None:
        return False
    if rename is not None and staged is not None:
        early = _refreshed(index, staged)
        if early is not None:
            try:
                with os.fdopen(os.dup(fd), "wb") as out:
                    out.write(early)
                rename()
            except BaseException:
                _release(fd, lock)
                raise
            os.replace(lock, index)
            os.close(fd)
            fd = _lock(lock, LOCK_TRIES, sleep)
            if fd is None:
                return True  # the change time: at git's next refresh
            rename = None
    committed = False
    try:
        if rename is not None:
            rename()
        try:
            new = _refreshed(index, files)
        except FileNotFoundError:
            return None
        if new is None:
            return None
        with os.fdopen(os.dup(fd), "wb") as out:
            out.write(new)
        os.replace(lock, index)
        committed = True
        return True
    finally:
        if committed:
            os.close(fd)
        else:
            _release(fd, lock)


def _lock(lock: str, tries: int, sleep: Callable[[float], object]) -> int | None:
    """Git's ``index.lock``, created exclusively as git does, tried ``tries`` times 5 ms
    apart; None while git still holds it."""
    for attempt in range(tries):
        try:
            return os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            if attempt + 1 < tries:
                sleep(0.005)
    return None


def _release(fd: int, lock: str) -> None:
    os.close(fd)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(lock)


def _refreshed(index: str, files: Callable[[], Mapping[bytes, tuple[Stat, bytes]]]) -> bytes | None:
    """The index with ``files()``'s entries refreshed; None when nothing changes or there is
    no index (nothing is tracked yet)."""
    try:
        with open(index, "rb") as handle:
            return refreshed(handle.read(), files())
    except FileNotFoundError:
        return None


def _git_starting(top: str, seen: set[str]) -> bool:
    from memkeeper.fs.processes import git_starting

    return git_starting(top, within_s=GIT_STARTING_S, seen=seen)


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


class LiveIndex:
    """Git's index entries of one root's live pages: brought up to date as each is renamed
    into place, or later (``owed``) when git held its index lock."""

    def __init__(
        self,
        root: str,
        git_dir: str | None,
        *,
        git_starting: Callable[[str, set[str]], bool] | None = None,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        top = working_tree(root)
        self.top = top
        self.git_starting = git_starting or _git_starting
        self.sleep = sleep
        self.root = root
        self.git_dir = git_dir if top is not None else None
        prefix = "" if top is None else os.path.relpath(root, top).replace(os.sep, "/")
        self.prefix = "" if prefix in ("", ".") else prefix + "/"
        self.owed: set[str] = set()

    def files(self, rels: Iterable[str], at: str | None = None) -> dict[bytes, tuple[Stat, bytes]]:
        """Each page's stat data and what git stores of it (pages gone or with broken
        markers left out); ``at``: the file to read for the one page of ``rels`` (its staged
        new version)."""
        found: dict[bytes, tuple[Stat, bytes]] = {}
        for rel in rels:
            path = at or os.path.join(self.root, rel)
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

    def rename(self, rel: str, rename: Callable[[], object], staged: str | None = None) -> bool:
        """Rename ``rel`` into place under git's index lock, its entry brought up to date in
        the same hold — from the ``staged`` file about to be renamed, when given, committed
        right after the rename (``update_index``) — or, when git holds the lock, renamed
        anyway and owed. First, it waits for a git command that has just started in the
        tree to end (``GIT_STARTING_S`` at most): one that read the index before the rename and
        looked at the page after it would see the new page beside the old entry, and a
        checkout or a rebase would refuse to overwrite it. A last look under the lock, right
        before the rename, finds one started meanwhile: the lock is let go and the wait begins
        again (``GIT_LOOKS`` times at most). True when the index was rewritten."""
        if self.git_dir is None:
            rename()
            return False
        files = lambda: self.files([rel])  # noqa: E731
        early = None if staged is None else (lambda: self.files([rel], staged))
        for attempt in range(GIT_LOOKS):
            seen = self._git_done()
            guarded = rename if attempt + 1 == GIT_LOOKS else self._checked(rename, seen)
            try:
                done = update_index(
                    self.git_dir, files, rename=guarded, tries=LOCK_TRIES, staged=early
                )
            except _GitStarted:  # the lock and the index left as they were: look again
                continue
            break
        if done is False:
            rename()
            self.owed.add(rel)
        return done is True

    def _git_done(self) -> set[str] | None:
        """Wait until no git command that has just started works in the tree, polling every
        ``GIT_POLL_S`` for up to ``GIT_STARTING_S``; the processes the last look found too
        old ever to count (None: the wait ran out, or there is no tree)."""
        if self.top is None:
            return None
        for _ in range(round(GIT_STARTING_S / GIT_POLL_S)):
            seen: set[str] = set()
            if not self.git_starting(self.top, seen):
                return seen
            self.sleep(GIT_POLL_S)
        return None

    def _checked(self, rename: Callable[[], object], seen: set[str] | None) -> Callable[[], None]:
        """``rename``, once a last look under the index lock — at the processes not in ``seen``
        — finds no git command just started (``_GitStarted`` otherwise: the caller lets go of
        the lock and waits again)."""

        def checked() -> None:
            if seen is not None and self.top is not None and self.git_starting(self.top, seen):
                raise _GitStarted
            rename()

        return checked

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
