"""Git's index file, read just far enough to make git compare some entries by content. Pure.

An entry whose recorded size is 0 is one git does not trust its stat data for: whatever the
file's size and times, git compares its content (through the clean filter) before calling it
modified. Git does the same to its own "racily clean" entries. ``smudged`` sets that size to
0 in the entries of the paths given, in place: every offset, and so every extension (the
cached tree, the offset tables), stays valid; the trailing checksum is computed again.

Index versions 2, 3 and 4 (paths prefix-compressed) are read, with SHA-1 or SHA-256 object
names (told by the checksum that ends the file; one of zeros — ``index.skipHash`` — stays
zeros, with SHA-1 names). A split index (its ``link`` extension) is not: the entries may
live in the shared index, which is git's to rewrite.
"""

from __future__ import annotations

import hashlib
import struct

_HEADER = struct.Struct(">4sLL")
_STAT_FIELDS = 40  # ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each)
_SIZE_AT = 36  # the size's offset in an entry
_EXTENDED = 0x4000


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


def smudged(data: bytes, paths: frozenset[bytes]) -> bytes | None:
    """The index with the size of each of ``paths``' entries (paths from the top of the
    working tree, ``/``-separated) set to 0; None when none of them has a non-zero size (or
    the index is not one this reads)."""
    offsets = size_offsets(data)
    if offsets is None:
        return None
    wanted = [offsets[p] for p in sorted(paths) if p in offsets]
    wanted = [at for at in wanted if data[at : at + 4] != bytes(4)]
    if not wanted:
        return None
    out = bytearray(data)
    for at in wanted:
        out[at : at + 4] = bytes(4)
    length = _name_length(data)
    assert length is not None
    if data.endswith(bytes(length)) and length == 20 and not _verifies(data, 20):
        return bytes(out)  # index.skipHash: no checksum to keep
    algorithm = "sha1" if length == 20 else "sha256"
    out[-length:] = hashlib.new(algorithm, bytes(out[:-length])).digest()
    return bytes(out)


def _verifies(data: bytes, length: int) -> bool:
    algorithm = "sha1" if length == 20 else "sha256"
    return hashlib.new(algorithm, data[:-length]).digest() == data[-length:]
