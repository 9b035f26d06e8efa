"""A file lock excludes every other holder until its block ends, however it ends (another
open of the lock file stands for another process: flock locks belong to an open file; the
same against real processes: tests/e2e/test_fs_processes.py)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from memkeeper.fs import locks


def free(lock: Path) -> bool:
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_a_lock_is_held_for_its_block_and_free_after(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    with locks.file_lock(str(lock)):
        assert lock.exists()
        assert not free(lock)
    assert free(lock)


def test_a_lock_is_released_when_its_block_raises(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    with pytest.raises(RuntimeError), locks.file_lock(str(lock)):
        raise RuntimeError("boom")
    assert free(lock)
