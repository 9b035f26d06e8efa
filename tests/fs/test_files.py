from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.fs import files as fsio


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


# -- confine --------------------------------------------------------------------------------


def test_confine_accepts_and_normalises_a_nested_path(tmp_path: Path) -> None:
    assert fsio.confine(tmp_path, "memory/scratch/x.md") == "memory/scratch/x.md"
    assert fsio.confine(tmp_path, "./memory//x.md") == "memory/x.md"
    assert fsio.confine(tmp_path, "memory\\x.md") == "memory/x.md"


@pytest.mark.parametrize(
    "bad", ["../x.md", "a/../../x.md", "a/../b.md", "/etc/passwd", "", ".", "./", "..\\x.md"]
)
def test_confine_refuses_paths_that_leave_or_name_no_file(tmp_path: Path, bad: str) -> None:
    with pytest.raises(Invalid, match="outside the memory root") as caught:
        fsio.confine(tmp_path, bad)
    assert caught.value.fields["path"] == bad


def test_confine_refuses_a_symlinked_directory_pointing_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "memory").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Invalid, match="symlink"):
        fsio.confine(root, "memory/x.md")


def test_confine_allows_a_symlinked_directory_that_stays_inside(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert fsio.confine(tmp_path, "alias/x.md") == "alias/x.md"


def test_confine_works_when_the_root_itself_is_reached_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    assert fsio.confine(tmp_path / "link", "x.md") == "x.md"


# -- read_bytes -----------------------------------------------------------------------------


def test_read_bytes_returns_the_exact_bytes(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf# T\r\nbody  \r\nno final newline"
    (tmp_path / "a.md").write_bytes(data)
    assert fsio.read_bytes(tmp_path, "a.md") == data


def test_read_bytes_refuses_a_symlink_even_to_a_file_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("x")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    with pytest.raises(Invalid, match="symlink"):
        fsio.read_bytes(tmp_path, "link.md")


def test_read_bytes_refuses_a_dangling_symlink_as_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "link.md").symlink_to(tmp_path / "gone.md")
    with pytest.raises(Invalid, match="symlink"):
        fsio.read_bytes(tmp_path, "link.md")


def test_read_bytes_refuses_a_directory(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    with pytest.raises(Invalid, match="memory: is a directory"):
        fsio.read_bytes(tmp_path, "memory")


def test_read_bytes_of_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(Invalid, match=r"^nope\.md: no such file — check the path"):
        fsio.read_bytes(tmp_path, "nope.md")


def test_read_bytes_under_a_file_is_invalid_not_an_environment_failure(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x")
    with pytest.raises(Invalid, match="no such file"):
        fsio.read_bytes(tmp_path, "a.md/b.md")


def test_read_bytes_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(Invalid, match="not a regular file"):
        fsio.read_bytes(tmp_path, "pipe.md")


def test_read_bytes_reports_other_open_errors_as_environment_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.md").write_text("x")

    def denied(path: str, flags: int, mode: int = 0o777) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(EnvironmentFailure, match=r"secret\.md: cannot open: Permission denied"):
        fsio.read_bytes(tmp_path, "secret.md")


# -- atomic_write ---------------------------------------------------------------------------


def test_make_directories_creates_what_is_missing_and_keeps_what_is_there(
    tmp_path: Path,
) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory/keep.md").write_text("x")
    fsio.make_directories(tmp_path, "memory/log/2026/day.md")
    assert (tmp_path / "memory/log/2026").is_dir()
    assert not (tmp_path / "memory/log/2026/day.md").exists()
    assert (tmp_path / "memory/keep.md").read_text() == "x"
    fsio.make_directories(tmp_path, "memory/log/2026/day.md")  # again: nothing to do
    fsio.make_directories(tmp_path, "top.md")


def test_make_directories_never_goes_through_a_symlink_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "memory").symlink_to(outside)
    with pytest.raises(Invalid, match="outside the memory root"):
        fsio.make_directories(root, "memory/log/day.md")
    assert list(outside.iterdir()) == []


def test_make_directories_names_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "memory").write_text("x")
    with pytest.raises(Invalid, match=r"^memory/log/a\.md: 'memory' on its path is a file"):
        fsio.make_directories(tmp_path, "memory/log/a.md")


def test_atomic_write_creates_a_new_file(tmp_path: Path) -> None:
    fsio.atomic_write(tmp_path, "new.md", b"hello\n")
    assert (tmp_path / "new.md").read_bytes() == b"hello\n"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("mode", [0o640, 0o755, 0o600])
def test_atomic_write_keeps_the_permission_bits(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    target.chmod(mode)
    fsio.atomic_write(tmp_path, "a.md", b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert leftovers(tmp_path) == []


def test_atomic_write_replaces_the_inode_not_the_bytes_in_place(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    with target.open("rb") as held:
        fsio.atomic_write(tmp_path, "a.md", b"new")
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
        fsio.atomic_write(tmp_path, "a.md", b"new bytes")
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
        fsio.atomic_write(tmp_path, "a.md", b"new")
    assert (tmp_path / "a.md").read_bytes() == b"old"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ("write.after_temp_write", b"old"),
        ("write.after_rename", b"new"),
    ],
)
def test_a_crash_leaves_either_the_old_or_the_new_bytes(
    tmp_path: Path, point: str, expected: bytes
) -> None:
    (tmp_path / "a.md").write_bytes(b"old")
    done = run_python(
        f"""
        from pathlib import Path
        from memkeeper.fs import files as fsio
        fsio.atomic_write(Path({str(tmp_path)!r}), "a.md", b"new")
    """,
        MEMKEEPER_CRASH_AT=point,
    )
    assert done.returncode == -9
    assert (tmp_path / "a.md").read_bytes() == expected


# -- file_lock ------------------------------------------------------------------------------

TRY_LOCK = """
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("blocked")
    else:
        print("acquired")
"""


@pytest.fixture
def editor_opens_after_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor that opens the file for writing just after memkeeper's last check (the
    window no check closes): its save goes into the file memkeeper then replaces."""
    monkeypatch.setattr(fsio, "open_for_writing", lambda fd: False)


def test_a_guarded_replace_refuses_a_file_that_changed_since_it_was_read(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"theirs\n")
    keep = str(tmp_path / "keep")
    with pytest.raises(fsio.Raced) as raced:
        fsio.atomic_write(tmp_path, "a.md", b"ours\n", expected=b"read\n", keep=keep)
    assert raced.value.current == b"theirs\n"
    assert (tmp_path / "a.md").read_bytes() == b"theirs\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"], "no temp file, no link left"


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_a_guarded_replace_keeps_the_replaced_inode(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"old\n")
    keep = tmp_path / "keep"
    with open(tmp_path / "a.md", "r+b") as editor:  # opened before the replace
        assert fsio.atomic_write(tmp_path, "a.md", b"new\n", expected=b"old\n", keep=str(keep))
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
    assert fsio.atomic_write(tmp_path, "a.md", b"new\n", expected=b"old\n", keep=str(keep))
    assert (tmp_path / "a.md").read_bytes() == b"new\n"
    assert keep.read_bytes() == b"saved in the window\n"


def try_lock_elsewhere(lock: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(TRY_LOCK), str(lock)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.strip()


def test_file_lock_excludes_another_process_until_released(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    with fsio.file_lock(str(lock)):
        assert lock.exists()
        assert try_lock_elsewhere(lock) == "blocked"
    assert try_lock_elsewhere(lock) == "acquired"


def test_file_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    with pytest.raises(RuntimeError), fsio.file_lock(str(lock)):
        raise RuntimeError
    assert try_lock_elsewhere(lock) == "acquired"


# -- crashpoint -----------------------------------------------------------------------------

CRASH = """
    from memkeeper.fs import files as fsio
    fsio.crashpoint("here")
    print("survived")
"""


def test_crashpoint_kills_the_process_when_named() -> None:
    done = run_python(CRASH, MEMKEEPER_CRASH_AT="here")
    assert done.returncode == -9
    assert "survived" not in done.stdout


@pytest.mark.parametrize("setting", ["elsewhere", ""])
def test_crashpoint_does_nothing_for_another_name(setting: str) -> None:
    done = run_python(CRASH, MEMKEEPER_CRASH_AT=setting)
    assert (done.returncode, done.stdout) == (0, "survived\n")
