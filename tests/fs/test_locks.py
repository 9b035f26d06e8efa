"""A file lock excludes every other holder until its block ends, however it ends (another
open of the lock file stands for another process: flock locks belong to an open file; the
same against real processes: tests/e2e/test_fs_processes.py)."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure
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


# -- who holds a lock, as the kernel lists it --------------------------------------------------

LISTED = """\
1: POSIX  ADVISORY  READ 3001 fe:00:77 124 124
2: POSIX  ADVISORY  WRITE 3002 fe:00:77 120 120
3: -> POSIX  ADVISORY  WRITE 3003 fe:00:77 120 120
4: FLOCK  ADVISORY  WRITE 3004 fe:00:78 0 EOF
5: OFDLCK ADVISORY  WRITE -1 fe:00:79 0 EOF
6: POSIX  ADVISORY  WRITE 3006 fe:00:80 100 EOF
"""


def test_the_holder_of_a_byte_is_the_writer_listed_on_it_not_a_reader_nor_a_waiter() -> None:
    assert locks.listed_holder(LISTED, "fe:00:77", 120) == 3002
    assert locks.listed_holder(LISTED, "fe:00:77", 124) is None  # read locks only
    assert locks.listed_holder(LISTED, "fe:00:78", None) == 3004  # an flock holds it all
    assert locks.listed_holder(LISTED, "fe:00:79", None) is None  # no pid to name
    assert locks.listed_holder(LISTED, "fe:00:80", 4096) == 3006  # up to the end of the file
    assert locks.listed_holder(LISTED, "fe:00:80", 99) is None
    assert locks.listed_holder(LISTED, "fe:00:81", None) is None
    assert locks.listed_holder("garbage\n\n", "fe:00:77", 120) is None


def test_the_holder_of_a_held_file_lock_is_this_process(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    with locks.file_lock(str(lock)):
        assert locks.holder(str(lock)) == os.getpid()
    assert locks.holder(str(lock)) is None
    assert locks.holder(str(tmp_path / "missing.lock")) is None


def test_a_wait_for_a_lock_held_past_the_bound_is_store_busy_naming_the_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22 item 8: a holder stopped with the lock held it for good, and every other writer
    of the file waited without end; now the wait ends after ``LOCK_WAIT_S`` (another open of
    the lock file stands for the holder)."""
    monkeypatch.setattr(locks, "LOCK_WAIT_S", 0.1)
    lock = tmp_path / "a.lock"
    outcome: list[BaseException | None] = []

    def wait_for_it() -> None:
        try:
            with locks.file_lock(str(lock), "CLAUDE.md"):
                outcome.append(None)
        except EnvironmentFailure as failure:
            outcome.append(failure)

    with locks.file_lock(str(lock)):
        waiter = threading.Thread(target=wait_for_it, daemon=True)
        waiter.start()
        waiter.join(timeout=10)
        assert outcome, "the wait had no end"
    failure = outcome[0]
    assert isinstance(failure, EnvironmentFailure)
    assert failure.fields["reason"] == "store_busy"
    assert failure.fields["holder"] == os.getpid()
    assert failure.message.startswith(f"CLAUDE.md: process {os.getpid()} (")
    assert "has held its lock for over 0.1 s — nothing was changed" in failure.message
    with locks.file_lock(str(lock), "CLAUDE.md"):  # free once its holder let it go
        pass
