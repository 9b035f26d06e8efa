"""The disk layer against other real processes: a crash at a named point, a temp file of a
writer that died, another process writing a file or holding its lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.fs import atomic, locks, processes
from memkeeper.fs import files as fsio
from tests.fs.conftest import run_python
from tests.fs.test_atomic import leftovers

CRASH = """
    from memkeeper.fs import crash
    crash.crashpoint("here")
    print("survived")
"""

HOLD_OPEN = """
import sys, time
handle = open(sys.argv[1], sys.argv[2])
print("open", flush=True)
time.sleep(60)
"""

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


def try_lock_elsewhere(lock: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(TRY_LOCK), str(lock)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """A file another process has open for writing, for the test's length."""
    path = tmp_path / "a.md"
    path.write_bytes(b"bytes")
    command = [sys.executable, "-c", HOLD_OPEN, str(path), "ab"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "open\n"
        yield path
        holder.kill()


def open_for_reading(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


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
        from memkeeper.fs import atomic
        atomic.atomic_write(Path({str(tmp_path)!r}), "a.md", b"new")
    """,
        MEMKEEPER_CRASH_AT=point,
    )
    assert done.returncode == -9
    assert (tmp_path / "a.md").read_bytes() == expected


def test_temps_of_dead_writers_are_swept_and_a_live_ones_left(tmp_path: Path) -> None:
    dead = run_python("import os; print(os.getpid())").stdout.strip()
    (tmp_path / f".a.md.memkeeper-{dead}.tmp").write_bytes(b"x")
    (tmp_path / f".a.md.memkeeper-{os.getpid()}.tmp").write_bytes(b"x")
    (tmp_path / f".b.md.memkeeper-{dead}.tmp").write_bytes(b"x")
    atomic.sweep_temps(str(tmp_path), "a.md")
    assert leftovers(tmp_path) == sorted(
        [f".a.md.memkeeper-{os.getpid()}.tmp", f".b.md.memkeeper-{dead}.tmp"]
    )
    atomic.remove_temp(tmp_path, "a.md", f".a.md.memkeeper-{os.getpid()}.tmp")
    atomic.remove_temp(tmp_path, "a.md", f".a.md.memkeeper-{os.getpid()}.tmp")
    assert leftovers(tmp_path) == [f".b.md.memkeeper-{dead}.tmp"]


def test_crashpoint_kills_the_process_when_named() -> None:
    done = run_python(CRASH, MEMKEEPER_CRASH_AT="here")
    assert done.returncode == -9
    assert "survived" not in done.stdout


def test_a_whole_read_refuses_a_file_another_process_is_writing(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"half")
    command = [sys.executable, "-c", HOLD_OPEN, str(tmp_path / "a.md"), "ab"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as writer:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "open\n"
        assert fsio.read_bytes(tmp_path, "a.md") == b"half"
        with pytest.raises(fsio.Raced) as raced:
            fsio.read_bytes(tmp_path, "a.md", whole=True)
        assert raced.value.current == b"half"
        writer.kill()
    assert fsio.read_bytes(tmp_path, "a.md", whole=True) == b"half"


def test_file_lock_excludes_another_process_until_released(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    with locks.file_lock(str(lock)):
        assert lock.exists()
        assert try_lock_elsewhere(lock) == "blocked"
    assert try_lock_elsewhere(lock) == "acquired"


def test_file_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    with pytest.raises(RuntimeError), locks.file_lock(str(lock)):
        raise RuntimeError
    assert try_lock_elsewhere(lock) == "acquired"


def test_a_file_another_process_writes_is_open_for_writing(held: Path) -> None:
    fd = open_for_reading(held)
    try:
        assert processes.writers(fd) is True
        assert processes.open_for_writing(fd)
    finally:
        os.close(fd)
    assert processes.still_writable(str(held))


def test_a_process_is_alive_until_it_is_gone() -> None:
    assert processes.pid_alive(os.getpid())
    gone = int(run_python("import os; print(os.getpid())").stdout)
    assert not processes.pid_alive(gone)
    assert not processes.pid_alive(2**64)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path / "tree")], check=True)
    (tmp_path / "tree" / "sub").mkdir()
    (tmp_path / "elsewhere").mkdir()
    return tmp_path / "tree"


def test_a_git_command_just_started_in_the_tree_is_seen_until_it_ends_or_ages(
    tree: Path,
) -> None:
    """Issue 22 item 11: the daemon marks a live page's entry and renames the page once no
    git command that has just started works in the tree (``fs.gitindex``) — git's own
    process, by ``/proc``."""
    assert not processes.git_started(str(tree), within_s=5.0)
    waiting = subprocess.Popen(  # a git command that has read what it needs and waits
        ["git", "cat-file", "--batch"], cwd=tree / "sub", stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not processes.git_started(str(tree), within_s=5.0):
            assert time.monotonic() < deadline, "the git process was never seen"
            time.sleep(0.01)
        before_it = processes.boot_clock() - 60
        assert not processes.git_started(str(tree), within_s=5.0, before=before_it)  # later
        assert processes.git_started(str(tree), within_s=5.0, before=processes.boot_clock())
        assert not processes.git_started(str(tree.parent / "elsewhere"), within_s=5.0)
        assert not processes.git_started(str(tree) + "-other", within_s=5.0)  # not a prefix
        time.sleep(0.3)
        assert not processes.git_started(str(tree), within_s=0.2)  # too old to count
    finally:
        waiting.kill()
        waiting.wait()
        assert waiting.stdin is not None
        waiting.stdin.close()
    assert not processes.git_started(str(tree), within_s=5.0)


def test_the_git_command_that_runs_this_process_is_not_waited_for(tree: Path) -> None:
    """A hook or a filter git runs (a ``memkeeper regen`` in a post-checkout hook) would
    otherwise wait for the very git command waiting for it."""
    probe = (
        "from memkeeper.fs import processes; "
        f"print(processes.git_started({json.dumps(str(tree))}, within_s=5.0))"
    )
    alias = f"alias.probe=!{sys.executable} -c '{probe}'"
    done = subprocess.run(
        ["git", "-c", alias, "probe"], cwd=tree, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
