"""The inotify wait on one directory: a write, a new file or a rename into it wakes it, a
quiet directory times out, a subdirectory's changes do not reach it, and where there is no
directory to watch there is no watch."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memkeeper.fs.dirwatch import open_watch


@pytest.fixture
def watched(tmp_path: Path) -> Path:
    (tmp_path / "log").write_text("")
    (tmp_path / "sub").mkdir()
    return tmp_path


def test_a_quiet_directory_times_out(watched: Path) -> None:
    watch = open_watch(str(watched))
    assert watch is not None
    start = time.monotonic()
    assert watch.wait(0.05) is False
    assert time.monotonic() - start >= 0.04
    watch.close()


@pytest.mark.parametrize("change", ["append", "create", "rename"])
def test_a_change_in_it_wakes_it_once(watched: Path, change: str) -> None:
    watch = open_watch(str(watched))
    assert watch is not None
    if change == "append":
        with open(watched / "log", "a") as log:
            log.write("x" * 10)
            log.flush()
    elif change == "create":
        (watched / "new").write_text("x")
    else:
        (watched / "sub" / "temp").write_text("x")
        os.replace(watched / "sub" / "temp", watched / "moved")
    assert watch.wait(1.0) is True
    assert watch.wait(0.0) is False  # everything queued was taken with the first wake
    watch.close()


def test_a_subdirectorys_changes_do_not_reach_it(watched: Path) -> None:
    watch = open_watch(str(watched))
    assert watch is not None
    (watched / "sub" / "deep").write_text("x")
    assert watch.wait(0.05) is False
    watch.close()


def test_no_directory_no_watch(tmp_path: Path) -> None:
    assert open_watch(str(tmp_path / "missing")) is None
