"""A file lock excludes every other process until its block ends, however it ends."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memkeeper.fs import locks

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
