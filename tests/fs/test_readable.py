"""Waiting for something to read on a descriptor of any number: one above 1023 (which
``select`` refuses) times out when empty and answers once written to, as do the wake-up
FIFO and the directory watch that use it."""

from __future__ import annotations

import os
import resource
import select
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.fs.dirwatch import DirWatch, open_watch
from memkeeper.fs.readable import readable

HIGH = 1500


@pytest.fixture
def room() -> Iterator[None]:
    """Room for descriptor ``HIGH`` (the soft limit raised for the test, then set back)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= HIGH:
        pytest.skip(f"this system allows {hard} open files: descriptor {HIGH} cannot exist")
    if soft != resource.RLIM_INFINITY and soft <= HIGH:
        resource.setrlimit(resource.RLIMIT_NOFILE, (HIGH + 1, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def high(room: None) -> Iterator[tuple[int, int]]:
    """A pipe whose read end is descriptor ``HIGH``."""
    read, write = os.pipe()
    os.dup2(read, HIGH)
    os.close(read)
    try:
        yield HIGH, write
    finally:
        os.close(HIGH)
        os.close(write)


def test_select_refuses_the_descriptor_this_waits_on(high: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="out of range"):
        select.select([high[0]], [], [], 0)


def test_a_high_descriptor_times_out_empty_and_answers_once_written(
    high: tuple[int, int],
) -> None:
    read, write = high
    start = time.monotonic()
    assert readable(read, 0.05) is False
    assert time.monotonic() - start >= 0.04
    os.write(write, b"\0")
    assert readable(read, 5) is True


def test_a_closed_other_end_is_readable_at_once() -> None:
    read, write = os.pipe()
    os.close(write)
    try:
        assert readable(read, 5) is True
    finally:
        os.close(read)


def test_a_directory_watch_on_a_high_descriptor_wakes(tmp_path: Path, room: None) -> None:
    watch = open_watch(str(tmp_path))
    assert watch is not None
    os.dup2(watch.fd, HIGH)
    os.close(watch.fd)
    moved = DirWatch(HIGH)
    try:
        assert moved.wait(0.02) is False
        (tmp_path / "log").write_text("x")
        assert moved.wait(5) is True
    finally:
        moved.close()
