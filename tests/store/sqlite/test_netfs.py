"""Finding the filesystem a memory home lives on, from the kernel's mount table."""

from __future__ import annotations

from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure
from memkeeper.store.sqlite import netfs as fsguard

MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 0:40 / /home rw,relatime shared:5 master:2 - nfs4 server:/home rw,vers=4.2
31 30 8:2 / /home/me/local rw - xfs /dev/vdb rw
32 22 0:41 / /mnt/my\\040share rw - cifs //nas/share rw
33 22 0:42 / /mnt/box rw - fuse.sshfs me@box:/ rw
"""


def test_mountinfo_entries_read_the_mount_point_and_the_type_after_the_separator() -> None:
    assert fsguard.mountinfo_entries(MOUNTINFO) == [
        ("/", "ext4"),
        ("/home", "nfs4"),
        ("/home/me/local", "xfs"),
        ("/mnt/my share", "cifs"),
        ("/mnt/box", "fuse.sshfs"),
    ]


def test_the_deepest_mount_above_a_path_decides_on_whole_segments() -> None:
    entries = fsguard.mountinfo_entries(MOUNTINFO)
    assert fsguard.deepest("/home/me/repo/.memkeeper", entries) == ("/home", "nfs4")
    assert fsguard.deepest("/home/me/local/repo", entries) == ("/home/me/local", "xfs")
    assert fsguard.deepest("/homework/repo", entries) == ("/", "ext4")
    assert fsguard.deepest("/mnt/my share/repo", entries) == ("/mnt/my share", "cifs")


def test_a_later_mount_on_the_same_point_hides_an_earlier_one() -> None:
    entries = [("/", "ext4"), ("/data", "ext4"), ("/data", "nfs")]
    assert fsguard.deepest("/data/repo", entries) == ("/data", "nfs")


def test_proc_mounts_is_read_when_there_is_no_mountinfo() -> None:
    text = "/dev/vda / ext4 rw 0 0\nserver:/x /srv/x nfs rw 0 0\n"
    assert fsguard.mounts_entries(text) == [("/", "ext4"), ("/srv/x", "nfs")]


@pytest.mark.parametrize("kind", ["nfs4", "cifs", "fuse.sshfs", "9p", "ceph", "glusterfs"])
def test_a_home_on_a_network_filesystem_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    table = tmp_path / "mountinfo"
    root_line = "22 1 8:1 / / rw - ext4 /dev/vda rw\n"
    table.write_text(f"{root_line}40 22 0:9 / {tmp_path} rw - {kind} server:/x rw\n")
    monkeypatch.setattr(fsguard, "MOUNTINFO", str(table))
    with pytest.raises(EnvironmentFailure, match=f"network filesystem \\({kind}, mounted at"):
        fsguard.refuse_network_filesystem(str(tmp_path / "repo/.memkeeper"))


@pytest.mark.parametrize("kind", ["ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "apfs"])
def test_a_home_on_a_local_filesystem_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(f"22 1 8:1 / / rw - {kind} /dev/vda rw\n")
    monkeypatch.setattr(fsguard, "MOUNTINFO", str(table))
    fsguard.refuse_network_filesystem(str(tmp_path / ".memkeeper"))


def test_without_a_mount_table_there_is_nothing_to_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fsguard, "MOUNTINFO", str(tmp_path / "none"))
    monkeypatch.setattr(fsguard, "MOUNTS", str(tmp_path / "none either"))
    assert fsguard.mount_of(str(tmp_path)) is None
    fsguard.refuse_network_filesystem(str(tmp_path / ".memkeeper"))


def test_this_machines_temp_directory_is_not_refused(tmp_path: Path) -> None:
    fsguard.refuse_network_filesystem(str(tmp_path / ".memkeeper"))
