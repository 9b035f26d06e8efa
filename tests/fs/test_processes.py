"""What the kernel tells of other processes: a file open for writing by one (a save in
progress), a replaced file someone may still write into, a process that is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.fs import processes
from tests.fs.conftest import run_python

HOLD_OPEN = """
import sys, time
handle = open(sys.argv[1], sys.argv[2])
print("open", flush=True)
time.sleep(60)
"""


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


def test_a_file_another_process_writes_is_open_for_writing(held: Path) -> None:
    fd = open_for_reading(held)
    try:
        assert processes.writers(fd) is True
        assert processes.open_for_writing(fd)
    finally:
        os.close(fd)
    assert processes.still_writable(str(held))


def test_a_file_nobody_writes_is_not(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"bytes")
    fd = open_for_reading(path)
    try:
        assert processes.writers(fd) is False
        assert not processes.open_for_writing(fd)
        assert processes.writers(fd) is False, "the lease taken to ask is given back"
    finally:
        os.close(fd)
    assert not processes.still_writable(str(path))


def test_a_process_is_alive_until_it_is_gone() -> None:
    assert processes.pid_alive(os.getpid())
    gone = int(run_python("import os; print(os.getpid())").stdout)
    assert not processes.pid_alive(gone)
    assert not processes.pid_alive(2**64)
