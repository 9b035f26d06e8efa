"""With a shared store (reference §12): what each file of this root held when it last agreed
with the store — the store's ``file_rev`` then, the bytes' hash, and the bytes (the base of a
three-way merge when both the file and the store moved since).

One small file per managed file in ``.memkeeper/synced/``, named by the path's tag: a JSON
line (path, rev, hash), then the bytes. Written by temp and rename, never fsynced, and always
after the file itself is durable: a mark lost to a crash only makes the next look compare
again (the file equals the store: agreed; the file is the old one: brought up to date), so a
mark is never ahead of the file it describes.
"""

from __future__ import annotations

import contextlib
import json
import os

from memkeeper.fs import background
from memkeeper.names import SYNCED_DIR, home_temp, kept_tag


class Mark:
    """What ``path`` held when it last agreed with the store: ``data`` (hash ``hash``), the
    store's ``rev`` of the file then."""

    __slots__ = ("path", "rev", "hash", "data")

    def __init__(self, path: str, rev: int, hash: str, data: bytes) -> None:
        self.path, self.rev, self.hash, self.data = path, rev, hash, data

    def __repr__(self) -> str:
        return f"Mark({self.path!r}, rev={self.rev}, hash={self.hash[:15]}…)"


def _where(home: str, rel: str) -> str:
    return os.path.join(home, SYNCED_DIR, kept_tag(rel))


def read_mark(home: str, rel: str) -> Mark | None:
    """The mark of ``rel`` (``None``: this root never agreed with the store on it)."""
    try:
        with open(_where(home, rel), "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    head, sep, data = raw.partition(b"\n")
    try:
        fields = json.loads(head)
        mark = Mark(fields["path"], int(fields["rev"]), str(fields["hash"]), data)
    except (ValueError, KeyError, TypeError):
        return None  # torn or foreign: as if never agreed (the next look compares again)
    return mark if sep and mark.path == rel else None


def write_mark(home: str, mark: Mark) -> None:
    """Remember ``mark`` (replacing the file's previous one)."""
    where = _where(home, mark.path)
    os.makedirs(os.path.dirname(where), exist_ok=True)
    head = json.dumps({"path": mark.path, "rev": mark.rev, "hash": mark.hash}).encode()
    temp = home_temp(where, os.getpid())
    with open(temp, "wb") as handle:
        handle.write(head + b"\n" + mark.data)
    old = f"{where}.{os.getpid()}.old"
    try:  # the replaced mark lives on under a second name until the background removes it:
        os.link(where, old)  # freeing a just-written file makes the rename wait for its
    except FileNotFoundError:  # writeback (~0.3 ms)
        old = ""
    except FileExistsError:
        os.unlink(old)
        os.link(where, old)
    os.replace(temp, where)
    if old:
        background.submit(_unlink, old)


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def drop_mark(home: str, rel: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_where(home, rel))
