"""The atomic replace: old or new bytes after a crash, the mode kept, no temp file left; and,
guarded, a save made since the read is never replaced and one made into the replaced file
is kept."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memkeeper.fs import atomic, processes
from memkeeper.fs import files as fsio


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_atomic_write_creates_a_new_file(tmp_path: Path) -> None:
    atomic.atomic_write(tmp_path, "new.md", b"hello\n")
    assert (tmp_path / "new.md").read_bytes() == b"hello\n"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("mode", [0o640, 0o755, 0o600])
def test_atomic_write_keeps_the_permission_bits(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    target.chmod(mode)
    atomic.atomic_write(tmp_path, "a.md", b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert leftovers(tmp_path) == []


def test_atomic_write_replaces_the_inode_not_the_bytes_in_place(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    with target.open("rb") as held:
        atomic.atomic_write(tmp_path, "a.md", b"new")
        assert held.read() == b"old"
    assert target.read_bytes() == b"new"


def test_a_failed_write_keeps_the_old_bytes_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old bytes")

    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="Input/output"):
        atomic.atomic_write(tmp_path, "a.md", b"new bytes")
    assert target.read_bytes() == b"old bytes"
    assert leftovers(tmp_path) == []


def test_an_interrupted_write_keeps_the_old_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_bytes(b"old")

    def interrupt(src: str, dst: str, **dir_fds: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomic.atomic_write(tmp_path, "a.md", b"new")
    assert (tmp_path / "a.md").read_bytes() == b"old"
    assert leftovers(tmp_path) == []


@pytest.fixture
def editor_opens_after_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor that opens the file for writing just after memkeeper's last check (the
    window no check closes): its save goes into the file memkeeper then replaces."""
    monkeypatch.setattr(processes, "open_for_writing", lambda fd: False)


def test_a_guarded_replace_refuses_a_file_that_changed_since_it_was_read(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"theirs\n")
    keep = str(tmp_path / "keep")
    with pytest.raises(fsio.Raced) as raced:
        atomic.atomic_write(tmp_path, "a.md", b"ours\n", expected=b"read\n", keep=keep)
    assert raced.value.current == b"theirs\n"
    assert (tmp_path / "a.md").read_bytes() == b"theirs\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"], "no temp file, no link left"


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_a_guarded_replace_keeps_the_replaced_inode(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"old\n")
    keep = tmp_path / "keep"
    with open(tmp_path / "a.md", "r+b") as editor:  # opened before the replace
        assert atomic.atomic_write(tmp_path, "a.md", b"new\n", expected=b"old\n", keep=str(keep))
        editor.truncate(0)
        editor.write(b"saved late\n")
    assert (tmp_path / "a.md").read_bytes() == b"new\n"
    assert keep.read_bytes() == b"saved late\n", "the late save is in the kept file"


def test_a_whole_save_in_the_window_of_the_rename_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fast editor opens, writes and closes the file between memkeeper's last check and the
    rename: nobody has the replaced file open any more, but it holds the save."""
    (tmp_path / "a.md").write_bytes(b"old\n")
    keep = tmp_path / "keep"
    real = os.replace

    def save_then_rename(*args: object, **kwargs: object) -> None:
        with open(tmp_path / "a.md", "r+b") as editor:  # the file by its name: still the old
            editor.truncate(0)
            editor.write(b"saved in the window\n")
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", save_then_rename)
    assert atomic.atomic_write(tmp_path, "a.md", b"new\n", expected=b"old\n", keep=str(keep))
    assert (tmp_path / "a.md").read_bytes() == b"new\n"
    assert keep.read_bytes() == b"saved in the window\n"


def test_a_staged_replace_abandoned_leaves_the_file_and_no_temp(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"old")
    staged = atomic.stage(tmp_path, "a.md", b"new", expected=b"old")
    assert staged.identity is not None
    assert atomic.temp_exists(tmp_path, "a.md", staged.temp)
    staged.abandon()
    assert (tmp_path / "a.md").read_bytes() == b"old"
    assert leftovers(tmp_path) == []


def test_a_staged_create_never_replaces_a_file_made_meanwhile(tmp_path: Path) -> None:
    staged = atomic.stage(tmp_path, "a.md", b"ours", create=True)
    (tmp_path / "a.md").write_bytes(b"theirs")
    with pytest.raises(fsio.Raced) as raced:
        staged.finish()
    assert raced.value.current == b"theirs"
    assert (tmp_path / "a.md").read_bytes() == b"theirs"
    assert leftovers(tmp_path) == []
