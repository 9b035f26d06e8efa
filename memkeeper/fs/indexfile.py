"""Git's index file, read just far enough to refresh some entries' stat data. Pure.

Git trusts an entry's stat data: a file whose size, times or inode differ from what its entry
records is modified for ``checkout``, ``rebase`` or ``diff-files`` without a look at its
content. ``refreshed`` does for a live page what ``git update-index --refresh`` does after
comparing a file through the clean filter: when what git would store of the file (its stored
form, given) is the blob the entry names, the entry gets the file's stat data — in place, so
every offset, and so every extension (the cached tree, the offset tables), stays valid; the
trailing checksum is computed again. (A new index also means that a ``git status`` that read
the index before cannot write back what it found then: git writes its refreshed index only
when the file is still the one it read.) ``marked`` sets the "assume valid" bit (what
``git update-index --assume-unchanged`` sets) of an entry that names the file's blob: git then
looks not at the file at all — held while a live page is renamed (``fs.gitindex``);
``refreshed`` clears it.

Index versions 2, 3 and 4 (paths prefix-compressed) are read, with SHA-1 or SHA-256 object
names (told by the checksum that ends the file; one of zeros — ``index.skipHash`` — stays
zeros, with SHA-1 names). A split index (its ``link`` extension) is not: the entries may
live in the shared index, which is git's to rewrite.
"""

from __future__ import annotations

import hashlib
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import os
    from collections.abc import Collection, Mapping

_HEADER = struct.Struct(">4sLL")
_STAT_FIELDS = 40  # ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each)
_SIZE_AT = 36  # the size's offset in an entry
_EXTENDED = 0x4000
_VALID = 0x8000  # "assume valid": git takes the entry as up to date without a look at the file


def _name_length(data: bytes) -> int | None:
    """The object names' length: that of the checksum the index ends with."""
    for length, algorithm in ((20, "sha1"), (32, "sha256")):
        body, tail = data[:-length], data[-length:]
        if len(data) > _HEADER.size + length and hashlib.new(algorithm, body).digest() == tail:
            return length
    return 20 if data.endswith(bytes(20)) else None


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """Git's offset varint (index v4's prefix lengths): the value and the offset after it."""
    byte = data[at]
    value, at = byte & 0x7F, at + 1
    while byte & 0x80:
        byte = data[at]
        value, at = ((value + 1) << 7) | (byte & 0x7F), at + 1
    return value, at


def size_offsets(data: bytes) -> dict[bytes, int] | None:
    """Each stage-0 entry's path and the offset of its size field; None for an index this
    does not read."""
    try:
        signature, version, count = _HEADER.unpack_from(data)
    except struct.error:
        return None
    hash_length = _name_length(data)
    if signature != b"DIRC" or version not in (2, 3, 4) or hash_length is None:
        return None
    fixed = _STAT_FIELDS + hash_length + 2
    found: dict[bytes, int] = {}
    at, previous = _HEADER.size, b""
    try:
        for _ in range(count):
            (flags,) = struct.unpack_from(">H", data, at + fixed - 2)
            name_at = at + fixed + (2 if flags & _EXTENDED and version >= 3 else 0)
            if version == 4:
                strip, name_at = _varint(data, name_at)
                end = data.index(b"\0", name_at)
                path = previous[: len(previous) - strip] + data[name_at:end]
                following = end + 1
            else:
                end = data.index(b"\0", name_at)
                path = data[name_at:end]
                following = at + ((name_at - at + len(path) + 8) & ~7)
            if (flags >> 12) & 0x3 == 0:
                found[path] = at + _SIZE_AT
            previous, at = path, following
    except (struct.error, ValueError, IndexError):
        return None
    if _has_extension(data, at, hash_length, b"link"):
        return None
    return found


def _has_extension(data: bytes, at: int, hash_length: int, name: bytes) -> bool:
    end = len(data) - hash_length
    while at + 8 <= end:
        signature, size = struct.unpack_from(">4sL", data, at)
        if signature == name:
            return True
        at += 8 + size
    return False


def blob_id(data: bytes, length: int) -> bytes:
    """Git's object name of a blob holding ``data`` (SHA-1: 20 bytes; SHA-256: 32)."""
    algorithm = "sha1" if length == 20 else "sha256"
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).digest()


Stat = tuple[int, int, int, int, int, int, int, int, int]  # as an entry records it, below


def stat_of(info: os.stat_result) -> Stat:
    """A file's ``os.stat`` as an index entry records it: ctime and mtime (seconds,
    nanoseconds), dev, ino, uid, gid, size — each cut to 32 bits, as git does."""
    cut = 0xFFFFFFFF
    ctime_ns, mtime_ns = info.st_ctime_ns, info.st_mtime_ns
    return (
        (ctime_ns // 10**9) & cut, ctime_ns % 10**9, (mtime_ns // 10**9) & cut, mtime_ns % 10**9,
        info.st_dev & cut, info.st_ino & cut, info.st_uid & cut, info.st_gid & cut,
        info.st_size & cut,
    )  # fmt: skip


def refreshed(
    data: bytes, files: Mapping[bytes, tuple[Stat, bytes]], unmark: Collection[bytes] = ()
) -> bytes | None:
    """The index with the entry of each path in ``files`` (from the top of the working tree,
    ``/``-separated; its stat data and what git stores of it) holding that stat data — when
    the entry names that blob (else the entry stays: the file is modified for git) — and the
    entries of ``unmark`` no longer marked (``marked``). None when nothing changes, or the
    index is not one this reads."""
    found = _read(data)
    if found is None:
        return None
    offsets, length = found
    out = bytearray(data)
    for path, (stat, stored) in sorted(files.items()):
        at = offsets.get(path)
        if at is None:
            continue
        if not _names(out, at, stored, length):
            continue
        entry = at - _SIZE_AT
        ctime_s, ctime_ns, mtime_s, mtime_ns, dev, ino, uid, gid, size = stat
        struct.pack_into(">LLLLLL", out, entry, ctime_s, ctime_ns, mtime_s, mtime_ns, dev, ino)
        struct.pack_into(">LLL", out, entry + 28, uid, gid, size)  # (mode stays, at 24)
    for path in unmark:
        at = offsets.get(path)
        if at is not None:
            _flag(out, at, length, on=False)
    return _sealed(out, data, length)


def marked(data: bytes, files: Mapping[bytes, bytes]) -> bytes | None:
    """The index with the entry of each path in ``files`` (what git would store of the file
    now) marked "assume valid" — when the entry names that blob (a file modified for git
    stays unmarked, so git keeps seeing it). Git then takes each marked entry as up to date,
    its file unlooked at, until the mark is cleared (``refreshed``'s ``unmark``). None when
    nothing changes (no such entry, another blob, marked already), or the index is not one
    this reads."""
    found = _read(data)
    if found is None:
        return None
    offsets, length = found
    out = bytearray(data)
    for path, stored in sorted(files.items()):
        at = offsets.get(path)
        if at is not None and _names(out, at, stored, length):
            _flag(out, at, length, on=True)
    return _sealed(out, data, length)


def _names(out: bytearray, at: int, stored: bytes, length: int) -> bool:
    """Whether the entry whose size is at ``at`` names the blob of ``stored``."""
    entry = at - _SIZE_AT
    return bytes(out[entry + 40 : entry + 40 + length]) == blob_id(stored, length)


def _read(data: bytes) -> tuple[dict[bytes, int], int] | None:
    offsets = size_offsets(data)
    length = _name_length(data)
    return None if offsets is None or length is None else (offsets, length)


def _flag(out: bytearray, at: int, length: int, *, on: bool) -> None:
    """Set or clear the "assume valid" bit of the entry whose size is at ``at``."""
    where = at - _SIZE_AT + _STAT_FIELDS + length
    (flags,) = struct.unpack_from(">H", out, where)
    struct.pack_into(">H", out, where, flags | _VALID if on else flags & ~_VALID)


def _sealed(out: bytearray, data: bytes, length: int) -> bytes | None:
    """``out`` with its checksum computed again; None when it is ``data`` unchanged."""
    if out == data:
        return None
    if data.endswith(bytes(length)) and not _verifies(data, length):
        return bytes(out)  # index.skipHash: no checksum to keep
    algorithm = "sha1" if length == 20 else "sha256"
    out[-length:] = hashlib.new(algorithm, bytes(out[:-length])).digest()
    return bytes(out)


def _verifies(data: bytes, length: int) -> bool:
    algorithm = "sha1" if length == 20 else "sha256"
    return hashlib.new(algorithm, data[:-length]).digest() == data[-length:]
