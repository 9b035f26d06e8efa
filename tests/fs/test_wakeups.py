"""Waking queued claims through FIFOs: an inbox blocks until a byte or its timeout, notifiers
skip waiters that are gone or unread, and a crashed waiter's FIFO is discarded."""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.fs.wakeups import Inbox, discard, fifo_path, notify
from memkeeper.names import WAIT_DIR

SHORT = 0.05  # seconds an inbox waits when nothing is expected to wake it


@pytest.fixture
def home(tmp_path: Path) -> str:
    return str(tmp_path / ".memkeeper")


@pytest.fixture
def inbox(home: str) -> Iterator[Inbox]:
    opened = Inbox(home, "r1")
    yield opened
    if os.path.exists(opened.path):
        opened.close()


def test_an_inbox_is_a_private_fifo_under_the_wait_directory(home: str, inbox: Inbox) -> None:
    assert inbox.path == fifo_path(home, "r1") == os.path.join(home, WAIT_DIR, "r1.fifo")
    mode = os.stat(inbox.path).st_mode
    assert stat.S_ISFIFO(mode)
    assert stat.S_IMODE(mode) == 0o600


def test_an_inbox_nobody_notifies_times_out(inbox: Inbox) -> None:
    started = time.monotonic()
    assert inbox.block(SHORT) is False
    assert time.monotonic() - started >= SHORT * 0.9


def test_a_negative_timeout_does_not_wait(inbox: Inbox) -> None:
    assert inbox.block(-5.0) is False


def test_a_notification_wakes_the_inbox(home: str, inbox: Inbox) -> None:
    notify(home, ["r1"])
    assert inbox.block(0.2) is True


def test_notifications_before_a_wake_are_drained_together(home: str, inbox: Inbox) -> None:
    notify(home, ["r1"])
    notify(home, ["r1"])
    notify(home, ["r1"])
    assert inbox.block(0.2) is True
    assert inbox.block(SHORT) is False  # no hang-up either: the inbox holds a write end itself


def test_a_notification_from_another_thread_wakes_a_blocked_inbox(home: str, inbox: Inbox) -> None:
    poker = threading.Thread(target=notify, args=(home, ["r1"]), daemon=True)
    poker.start()
    assert inbox.block(5.0) is True
    poker.join(5)


def test_notify_reaches_only_the_waiters_it_names(home: str, inbox: Inbox) -> None:
    other = Inbox(home, "r2")
    try:
        notify(home, ["r2"])
        assert other.block(0.2) is True
        assert inbox.block(SHORT) is False
    finally:
        other.close()


def test_notify_skips_a_waiter_that_is_gone(home: str, inbox: Inbox) -> None:
    notify(home, ["nobody", "r1"])
    assert not os.path.exists(fifo_path(home, "nobody"))
    assert inbox.block(0.2) is True


def test_notify_with_no_wait_directory_at_all_is_a_no_op(tmp_path: Path) -> None:
    notify(str(tmp_path / "no-home"), ["r1"])
    assert not (tmp_path / "no-home").exists()


def test_notify_skips_a_fifo_nobody_reads(home: str) -> None:
    os.makedirs(os.path.join(home, WAIT_DIR))
    os.mkfifo(fifo_path(home, "orphan"))
    notify(home, ["orphan"])  # ENXIO: would block or fail if not skipped
    assert stat.S_ISFIFO(os.stat(fifo_path(home, "orphan")).st_mode)


def test_notify_writes_nothing_into_a_regular_file_in_a_fifos_place(home: str) -> None:
    os.makedirs(os.path.join(home, WAIT_DIR))
    Path(fifo_path(home, "plain")).write_bytes(b"")
    notify(home, ["plain"])
    assert Path(fifo_path(home, "plain")).read_bytes() == b""


def test_notify_does_not_follow_a_symlink_in_a_fifos_place(home: str, tmp_path: Path) -> None:
    os.makedirs(os.path.join(home, WAIT_DIR))
    target = tmp_path / "victim"
    target.write_bytes(b"")
    os.symlink(target, fifo_path(home, "link"))
    notify(home, ["link"])
    assert target.read_bytes() == b""


def test_close_removes_the_fifo_and_later_notifications_are_skipped(
    home: str, inbox: Inbox
) -> None:
    inbox.close()
    assert not os.path.exists(inbox.path)
    notify(home, ["r1"])
    assert not os.path.exists(inbox.path)


def test_discard_removes_a_crashed_waiters_fifo(home: str) -> None:
    os.makedirs(os.path.join(home, WAIT_DIR))
    os.mkfifo(fifo_path(home, "crashed"))
    discard(home, "crashed")
    assert not os.path.exists(fifo_path(home, "crashed"))
    discard(home, "crashed")  # already gone: nothing to do


def test_a_new_inbox_replaces_whatever_a_crashed_process_left_at_its_path(home: str) -> None:
    os.makedirs(os.path.join(home, WAIT_DIR))
    Path(fifo_path(home, "reused")).write_bytes(b"left behind")
    fresh = Inbox(home, "reused")
    try:
        assert stat.S_ISFIFO(os.stat(fresh.path).st_mode)
        notify(home, ["reused"])
        assert fresh.block(0.2) is True
    finally:
        fresh.close()


def test_a_waiter_hanging_up_between_the_open_and_the_write_breaks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    inbox = Inbox(str(tmp_path), "r1")
    fstat = os.fstat
    open_ = [True]

    def hang_up_first(fd: int) -> os.stat_result:
        if open_.pop() if open_ else False:
            inbox.close()  # the waiter got its answer and closed its ends meanwhile
        return fstat(fd)

    monkeypatch.setattr(os, "fstat", hang_up_first)
    notify(str(tmp_path), ["r1", "r2"])


def test_a_poke_that_fails_for_one_waiter_still_pokes_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.fs import wakeups

    first, second = Inbox(str(tmp_path), "r1"), Inbox(str(tmp_path), "r2")
    real = wakeups._poke

    def failing(path: str) -> None:
        if path == fifo_path(str(tmp_path), "r1"):
            raise PermissionError(13, "denied", path)
        real(path)

    monkeypatch.setattr(wakeups, "_poke", failing)
    notify(str(tmp_path), ["r1", "r2"])
    assert second.block(0.5)
    assert not first.block(0.01)
    first.close()
    second.close()


def test_a_poke_from_a_thread_of_the_waiters_own_process_wakes_it(inbox: Inbox) -> None:
    """A watch of the shared store (another thread) wakes its waiter through its own end."""
    threading.Timer(SHORT, inbox.poke).start()
    started = time.monotonic()
    assert inbox.block(10) is True
    assert time.monotonic() - started < 5
    inbox.poke()
    inbox.poke()  # two pokes before a look: one wake-up
    assert inbox.block(0) is True
    assert inbox.block(SHORT) is False


def test_a_poke_after_the_close_writes_nowhere(home: str) -> None:
    """The watch may poke once more while its waiter closes: no descriptor is reused."""
    inbox = Inbox(home, "r2")
    inbox.close()
    inbox.poke()
    inbox.close()  # twice: nothing
    assert not os.path.exists(fifo_path(home, "r2"))
