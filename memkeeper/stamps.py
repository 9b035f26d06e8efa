"""A file's stat stamp — its size, mtime and ctime (ns), inode and device — and when a stamp
the index recorded can stand in for reading the file (pure).

``check``, ``verify``, ``status`` and the daemon's scans read only the files whose stamp moved
since memkeeper last read them: ``lstat`` costs a few microseconds, a read and a hash of the
bytes a hundred times that. The stamp catches what changes a file: an editor's save (a new
inode, or a new mtime), a ``git checkout`` (a new inode), ``touch -d`` (mtime moved, and the
ctime with it: no process can set a ctime), a same-size rewrite (a new mtime, or only a new
ctime when the mtime was put back with ``utime``).

What it cannot see is a rewrite within the clock tick the stamp was taken in: the file
system's timestamps move in ticks (a few ms on Linux's ext4, 1 s or 2 s elsewhere), so a
second write in the same tick as the first leaves the same stamp. Git's "racily clean" rule
answers it, and so does ``trusted``: a stamp whose mtime or ctime is not at least
``RACY_MARGIN_NS`` older than the moment it was taken proves nothing, and the file is read
again next time (then its stamp is old enough, and recorded).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from typing import Any, Self

# Longer than any file system's timestamp tick (FAT's 2 s): a file changed this close to the
# moment its stamp was taken is read again at the next look.
RACY_MARGIN_NS = 3_000_000_000


# Tuples rather than ``records.Record``s: a look at 10,000 files builds and compares 20,000 of
# them, and a tuple's construction and equality are C's (a Record's equality alone cost such a
# look 0.1 s on a loaded machine).
class Stamp(tuple[int, int, int, int, int]):
    """What ``lstat`` tells of a regular file that changes when its bytes do."""

    __slots__ = ()

    def __new__(cls, size: int, mtime_ns: int, ctime_ns: int, inode: int, device: int) -> Self:
        return tuple.__new__(cls, (size, mtime_ns, ctime_ns, inode, device))

    @property
    def size(self) -> int:
        return self[0]

    @property
    def mtime_ns(self) -> int:
        return self[1]

    @property
    def ctime_ns(self) -> int:
        return self[2]

    @property
    def inode(self) -> int:
        return self[3]

    @property
    def device(self) -> int:
        return self[4]

    FIELDS = ("size", "mtime_ns", "ctime_ns", "inode", "device")

    def _replace(self, **changes: int) -> Stamp:
        size, mtime_ns, ctime_ns, inode, device = (
            changes.get(n, v) for n, v in zip(self.FIELDS, self, strict=True)
        )
        return Stamp(size, mtime_ns, ctime_ns, inode, device)


def stamp_of(info: os.stat_result) -> Stamp:
    """The stamp of an ``lstat`` (or ``fstat``) result."""
    values = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)
    return tuple.__new__(Stamp, values)


class Stamped(tuple[str, Stamp, str, int, "str | None"]):
    """A file's stamp when it was read, the hash of the bytes read (``hash``), when the stamp
    was taken (``taken_ns``: wall clock, before the ``lstat``), and ``clean``: the key of the
    ``check`` that found those bytes without a violation (``None``: none did)."""

    __slots__ = ()

    def __new__(
        cls, path: str, stamp: Stamp, hash: str, taken_ns: int, clean: str | None = None
    ) -> Self:
        return tuple.__new__(cls, (path, stamp, hash, taken_ns, clean))

    @property
    def path(self) -> str:
        return self[0]

    @property
    def stamp(self) -> Stamp:
        return self[1]

    @property
    def hash(self) -> str:
        return self[2]

    @property
    def taken_ns(self) -> int:
        return self[3]

    @property
    def clean(self) -> str | None:
        return self[4]

    FIELDS = ("path", "stamp", "hash", "taken_ns", "clean")

    def _replace(self, **changes: Any) -> Stamped:
        values: list[Any] = [
            changes.get(name, value) for name, value in zip(self.FIELDS, self, strict=True)
        ]
        return Stamped(*values)


def racy(stamp: Stamp, taken_ns: int) -> bool:
    """Whether a change in the same tick as the stamp could have left it as it is: its mtime
    or ctime is within ``RACY_MARGIN_NS`` of the moment it was taken, or after it."""
    return max(stamp.mtime_ns, stamp.ctime_ns) >= taken_ns - RACY_MARGIN_NS


def trusted(known: Stamped | None, now: Stamp | None) -> bool:
    """Whether the file whose stamp is ``now`` still holds the bytes ``known`` hashed: the
    same stamp, taken long enough after the file's last change (``racy``)."""
    return (
        known is not None
        and now is not None
        and known.stamp == now
        and not racy(now, known.taken_ns)
    )


def unchanged(known: Stamped | None, now: Stamp | None, indexed: str | None) -> bool:
    """Whether a file needs no reading to know it holds what the index holds (its hash
    ``indexed``): a trusted stamp of those very bytes."""
    return trusted(known, now) and known is not None and known.hash == indexed


def judged_clean(known: Stamped | None, now: Stamp | None, key: str) -> bool:
    """Whether a file needs no reading to know ``check`` (its rules and the policy, ``key``)
    finds nothing in it: a trusted stamp of bytes a check of that key found clean."""
    return trusted(known, now) and known is not None and known.clean == key


def kept_clean(old: Stamped | None, new: Stamped) -> Stamped:
    """The row to store for ``new``: a check's verdict stays with the same bytes."""
    if new.clean is None and old is not None and old.hash == new.hash:
        return new._replace(clean=old.clean)
    return new
