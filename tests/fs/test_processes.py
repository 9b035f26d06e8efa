"""What the kernel tells of other processes: a file open for writing by one (a save in
progress), a replaced file someone may still write into, a process that is gone."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.fs import processes


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """A file open for writing (by this process: the kernel's answer is the same for any;
    another process's, in tests/e2e/test_fs_processes.py), for the test's length."""
    path = tmp_path / "a.md"
    path.write_bytes(b"bytes")
    with path.open("ab"):
        yield path


def open_for_reading(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


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


def test_a_file_open_for_writing_is_told_apart(held: Path) -> None:
    fd = open_for_reading(held)
    try:
        assert processes.open_for_writing(fd)
        assert processes.writers(fd) is True
    finally:
        os.close(fd)


def test_this_process_is_alive() -> None:
    assert processes.pid_alive(os.getpid())


def test_a_process_is_described_by_its_command_line_and_a_running_one_is_not_stopped() -> None:
    said = processes.describe(os.getpid())
    assert said.startswith(f"process {os.getpid()} (")
    assert "python" in said
    assert not processes.stopped(os.getpid())
    assert processes.describe(2**22 + 1) == f"process {2**22 + 1}"  # no such process
    assert not processes.stopped(2**22 + 1)


def test_the_boot_clock_is_the_one_process_starts_are_dated_by() -> None:
    """``git_started``'s ``before`` is compared with ``/proc``'s start of each process: this
    process started before now, on that clock."""
    tick = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{os.getpid()}/stat", "rb") as handle:
        started = int(handle.read().rpartition(b")")[2].split()[19]) / tick
    assert 0 < started <= processes.boot_clock()
