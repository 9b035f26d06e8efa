"""Refuse a memory home on a network filesystem, where SQLite's WAL does not work.

WAL needs shared memory between every process that opens the database, which NFS, SMB, 9p,
sshfs and cluster filesystems cannot give: a store there loses or corrupts commits silently.
The filesystem of the home is the type of the longest mount point above it in the kernel's
mount table (``/proc/self/mountinfo``, else ``/proc/mounts``); where there is no such table
(not Linux), there is nothing to check. Hot path (every store open): stdlib ``os`` only.
"""

from __future__ import annotations

import os

from memkeeper.errors import EnvironmentFailure

NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb", "smb2", "smb3", "smbfs", "9p", "afs", "ncpfs",
        "ceph", "glusterfs", "lustre", "gpfs", "beegfs", "ocfs2", "gfs2", "davfs",
        "sshfs", "fuse.sshfs", "fuse.ceph", "fuse.glusterfs", "fuse.s3fs", "fuse.rclone",
        "fuse.gcsfuse", "fuse.davfs2", "fuse.smbnetfs",
    }
)  # fmt: skip
MOUNTINFO = "/proc/self/mountinfo"
MOUNTS = "/proc/mounts"


def refuse_network_filesystem(home: str) -> None:
    """``EnvironmentFailure`` (exit 1) when ``home`` is, or would be created, on a network
    filesystem. Runs before anything is written there."""
    found = mount_of(os.path.realpath(home))
    if found is None or found[1] not in NETWORK_FILESYSTEMS:
        return
    mount_point, kind = found
    raise EnvironmentFailure(
        f"{home}: the memory home is on a network filesystem ({kind}, mounted at "
        f"{mount_point}) — SQLite's WAL does not work on network filesystems; move the "
        "repository to a local disk, or set MEMKEEPER_ROOT (or --root) to a checkout on one",
        path=home,
        filesystem=kind,
        mount_point=mount_point,
    )


def mount_of(path: str) -> tuple[str, str] | None:
    """``(mount point, filesystem type)`` of the mount holding the absolute ``path``."""
    for table, parse in ((MOUNTINFO, mountinfo_entries), (MOUNTS, mounts_entries)):
        try:
            with open(table, encoding="utf-8", errors="surrogateescape") as handle:
                text = handle.read()
        except OSError:
            continue
        return deepest(path, parse(text))
    return None


def deepest(path: str, entries: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The entry whose mount point is the longest whole-segment prefix of ``path``; the
    last one wins among equals, as a later mount hides an earlier one."""
    best: tuple[str, str] | None = None
    for mount_point, kind in entries:
        inside = mount_point == "/" or path == mount_point or path.startswith(mount_point + "/")
        if inside and (best is None or len(mount_point) >= len(best[0])):
            best = (mount_point, kind)
    return best


def mountinfo_entries(text: str) -> list[tuple[str, str]]:
    """``(mount point, type)`` per line of ``/proc/self/mountinfo``: the fifth field, and
    the first one after the ``-`` that ends the optional fields."""
    entries = []
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) > 6 and "-" in fields[6:]:
            kind = fields[fields.index("-", 6) + 1 :][:1]
            entries.append((_unescape(fields[4]), kind[0] if kind else ""))
    return entries


def mounts_entries(text: str) -> list[tuple[str, str]]:
    """``(mount point, type)`` per line of ``/proc/mounts`` (``SOURCE POINT TYPE ...``)."""
    return [
        (_unescape(fields[1]), fields[2])
        for fields in (line.split(" ") for line in text.splitlines())
        if len(fields) > 2
    ]


def _unescape(field: str) -> str:
    """The kernel writes space, tab, newline and backslash in paths as octal escapes."""
    if "\\" not in field:
        return field
    for code in ("040", "011", "012", "134"):
        field = field.replace("\\" + code, chr(int(code, 8)))
    return field
