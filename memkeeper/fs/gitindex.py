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


class LiveIndex:
    """Git's index entries of one root's live pages: brought up to date as each is renamed
    into place, or later (``owed``) when git held its index lock."""

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

    def rename(self, rel: str, rename: Callable[[], object]) -> bool:
        """Rename ``rel`` into place under git's index lock, its entry brought up to date in
        the same hold — or, when git holds the lock, renamed anyway and owed. True when the
        index was rewritten."""
        if self.git_dir is None:
            rename()
            return False
        files = lambda: self.files([rel])  # noqa: E731
        done = update_index(self.git_dir, files, rename=rename, tries=LOCK_TRIES)
        if done is False:
            rename()
            self.owed.add(rel)
        return done is True

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
