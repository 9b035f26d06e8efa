"""Git's index kept up with the live pages memkeeper rewrites (docs/reference.md §5,
"Generated pages and git").

With the clean filter, a re-rendered page holds what git stores — but git trusts its index's
stat data: a page whose size or times changed is modified for ``status`` (which reads the
index, refreshes it, then looks at the files again) and for ``checkout`` or ``rebase`` (which
compare nothing) a change they refuse to overwrite. A live page is therefore put in place in
three steps, each safe against any git command running beside it:

1. **mark**: once no git command that has just started works in the tree (so that the mark
   is held for moments), under git's ``index.lock``, the page's entry is marked "assume
   valid" (what ``git update-index --assume-unchanged`` sets) when it names what git would
   store of the page: a git command that reads the index from now on takes the entry as up
   to date without a look at the page. A page modified for git (a human's note) is not
   marked: git keeps seeing it, and its rename changes nothing git says of it;
2. **wait** for the git commands that started before the mark to end — they may have read
   the index unmarked and not yet looked at the page (one that becomes git after it reads
   the mark). Not for one started since: the mark would be held while it runs, and a
   ``git commit -a`` reading it would leave out a save of the page made meanwhile
   (``GIT_STARTING_S`` at most: an older one, a rebase waiting for its editor, has looked
   already or reads the index again);
3. **rename** under ``index.lock``, the entry given the new file's stat data (when what git
   would store of it is the blob the entry names, ``fs.indexfile``) and its mark cleared in
   the same hold (cleared too when the rename fails: a writer got in first): a ``checkout``
   (which holds the lock) sees page and entry agree.

The index is git's: this takes ``index.lock`` exactly as git does (created exclusively),
writes the new index into it and renames it over the index, holding it for a read and a
write of the index (and the page's rename), with no process started. Held by git, it is
tried again every 5 ms for up to 0.1 s, up to ``LOCK_ROUNDS`` times; then the page is
renamed anyway and its entry brought up to date later (``LiveIndex.owed``), its mark kept
meanwhile. The blob, and so what is staged, stays as it was; a mark the user set on a live
page is cleared with memkeeper's own.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.fs.indexfile import marked, refreshed, stat_of
from memkeeper.fs.root import working_tree
from memkeeper.regions.gitform import stored

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping

    from memkeeper.fs.indexfile import Stat

LOCK_TRIES = 20  # 5 ms apart
LOCK_ROUNDS = 3  # of LOCK_TRIES, for the mark and for the rename, before renaming anyway
# A git command that started before the mark may have read the index unmarked and not yet
# looked at the page: the rename waits for it to end, or to be this old (it has then looked,
# or it is one that waits — a rebase for its editor — whose steps read the index again).
GIT_STARTING_S = 3.0
GIT_POLL_S = 0.01


def update_index(
    git_dir: str,
    files: Callable[[], Mapping[bytes, tuple[Stat, bytes]]],
    *,
    rename: Callable[[], object] | None = None,
    unmark: Collection[bytes] = (),
    tries: int = 1,
    sleep: Callable[[float], object] = time.sleep,
) -> bool | None:
    """Under git's ``index.lock``: ``rename`` (a page into place), then the entries of
    ``files()`` (paths from the top of the working tree: stat data, stored form) refreshed
    and those of ``unmark`` unmarked (``indexfile.refreshed``) — unmarked too when ``rename``
    fails (its error raised after). True when the index was rewritten, None when nothing
    needed it (``rename`` done), False when git held its lock ``tries`` times (``rename``
    not done)."""
    failed: list[Exception] = []

    def first() -> None:
        if rename is not None:
            try:
                rename()
            except Exception as exc:  # (the page left as it was: its mark goes all the same)
                failed.append(exc)

    done = _rewrite(
        git_dir,
        lambda data: refreshed(data, {} if failed else files(), unmark),
        tries,
        sleep,
        first,
    )
    if failed:
        raise failed[0]
    return done


def mark_index(
    git_dir: str,
    files: Callable[[], Mapping[bytes, tuple[Stat, bytes]]],
    *,
    tries: int = 1,
    sleep: Callable[[float], object] = time.sleep,
) -> bool | None:
    """Under git's ``index.lock``, the entries of ``files()`` that name what git would store
    of the file marked "assume valid" (``indexfile.marked``). True when the index was
    rewritten, None when nothing needed it (no such entry, another blob, marked already, no
    index), False when git held its lock ``tries`` times."""
    return _rewrite(
        git_dir,
        lambda data: marked(data, {path: form for path, (_, form) in files().items()}),
        tries,
        sleep,
    )


def _rewrite(
    git_dir: str,
    change: Callable[[bytes], bytes | None],
    tries: int,
    sleep: Callable[[float], object],
    first: Callable[[], object] | None = None,
) -> bool | None:
    """Under git's ``index.lock``: ``first()``, then the index as ``change`` makes it of the
    index read (None: nothing to write) committed as git commits it. True when the index
    was rewritten, None when nothing needed it (or there is no index), False when git held
    its lock ``tries`` times (``first`` not run)."""
    index = os.path.join(git_dir, "index")
    lock = index + ".lock"
    fd = _lock(lock, tries, sleep)
    if fd is None:
        return False
    try:
        if first is not None:
            first()
        try:
            with open(index, "rb") as handle:
                new = change(handle.read())
        except FileNotFoundError:  # no index: nothing is tracked yet
            new = None
    except BaseException:
        _release(fd, lock)
        raise
    _settle(fd, new, lock, index)
    return None if new is None else True


def _settle(fd: int, new: bytes | None, lock: str, index: str) -> None:
    """Write ``new`` into the held lock and rename it over the index, as git commits it; the
    lock let go, the index untouched, when there is nothing new or the write fails."""
    if new is None:
        _release(fd, lock)
        return
    try:
        with os.fdopen(os.dup(fd), "wb") as out:
            out.write(new)
        os.replace(lock, index)
    except BaseException:
        _release(fd, lock)
        raise
    os.close(fd)


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


def _git_started(top: str, before: float | None) -> bool:
    from memkeeper.fs.processes import git_started

    return git_started(top, within_s=GIT_STARTING_S, before=before)


def _boot_clock() -> float:
    from memkeeper.fs.processes import boot_clock

    return boot_clock()


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
    """Git's index entries of one root's live pages: marked, then brought up to date as each
    is renamed into place (the module's three steps), or later (``owed``) when git held its
    index lock."""

    def __init__(
        self,
        root: str,
        git_dir: str | None,
        *,
        git_started: Callable[[str, float | None], bool] = _git_started,
        clock: Callable[[], float] = _boot_clock,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        top = working_tree(root)
        self.top = top
        self.git_started, self.clock, self.sleep = git_started, clock, sleep
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
            try:
                with open(at or os.path.join(self.root, rel), "rb") as handle:
                    data = handle.read()
                    info = os.fstat(handle.fileno())
                form = stored(data, rel)
            except (OSError, Invalid):
                continue
            stat = stat_of(info)
            found[self.path(rel)] = (stat, form)
        return found

    def renamed(
        self, rel: str, staged: Mapping[bytes, tuple[Stat, bytes]]
    ) -> dict[bytes, tuple[Stat, bytes]]:
        """The page ``staged`` (``files(..., at=)``) once renamed into place: the same file
        (the rename moves its change time alone), read again by its stat alone — nothing,
        when the file in place is another."""
        try:
            info = os.stat(os.path.join(self.root, rel), follow_symlinks=False)
        except OSError:
            return {}
        stat = stat_of(info)
        return {
            path: (stat, form)
            for path, (before, form) in staged.items()
            if stat[2:] == before[2:]  # all but the change time
        }

    def path(self, rel: str) -> bytes:
        """``rel``'s path in the index (from the top of the working tree)."""
        return os.fsencode(self.prefix + rel)

    def rename(self, rel: str, rename: Callable[[], object], staged: str | None = None) -> bool:
        """Put ``rel`` in place by ``rename`` (of the file ``staged``, when given): once no
        git command that has just started works in the tree, its entry marked (when git sees
        the page unmodified), the git commands started before the mark waited for, then renamed
        under git's index lock with its entry brought up to date and unmarked in the same
        hold (the module's steps) — or, when git holds the lock ``LOCK_ROUNDS`` times, renamed
        anyway and owed. Both pages are read before the lock is taken: it is held for the
        index (and the rename) alone. True when the index was rewritten."""
        if self.git_dir is None:
            rename()
            return False
        git_dir, path = self.git_dir, self.path(rel)
        self.wait_for_git()  # so that the mark is held as briefly as can be
        now = self.files([rel])
        for _ in range(LOCK_ROUNDS):
            mark = mark_index(git_dir, lambda: now, tries=LOCK_TRIES, sleep=self.sleep)
            if mark is not False:
                break
        if mark is True:  # (None: not tracked, modified, or marked already)
            self.wait_for_git(before=self.clock())
        new = None if staged is None else self.files([rel], staged)
        files = (lambda: self.files([rel])) if new is None else (lambda: self.renamed(rel, new))
        for _ in range(LOCK_ROUNDS):
            done = update_index(
                git_dir, files, rename=rename, unmark=[path], tries=LOCK_TRIES, sleep=self.sleep
            )
            if done is not False:
                return done is True
        rename()
        self.owed.add(rel)  # marked meanwhile (when it could be): git takes it as up to date
        return False

    def git_running(self) -> bool:
        """Whether a git command that has just started works in the tree (one look)."""
        return self.top is not None and self.git_started(self.top, None)

    def wait_for_git(self, before: float | None = None) -> None:
        """Wait until no git command that has just started (by ``before``, on
        ``processes.boot_clock``, when given) works in the tree, polling every ``GIT_POLL_S``
        for up to ``GIT_STARTING_S``. Also before a page is staged: linking the page's
        current file aside (``.memkeeper/kept/``) moves its change time, which a checkout
        compares, until the rename."""
        if self.top is None:
            return
        for _ in range(round(GIT_STARTING_S / GIT_POLL_S)):
            if not self.git_started(self.top, before):
                return
            self.sleep(GIT_POLL_S)

    def flush(self) -> bool:
        """Bring the owed entries up to date, and unmark them, unless git holds its index
        now; True when the index was rewritten."""
        if not self.owed or self.git_dir is None:
            return False
        owed = sorted(self.owed)
        paths = [self.path(rel) for rel in owed]
        done = update_index(self.git_dir, lambda: self.files(owed), unmark=paths)
        if done is not False:
            self.owed.clear()
        return done is True
