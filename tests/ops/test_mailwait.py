"""Waiting for mail (``inbox --wait``) on both stores: what waits is answered at once; a
message sent meanwhile, to the waiter or to all, wakes it long before its cap (the FIFO poke
with SQLite, the watch with etcd); a message to someone else does not end the wait, which
answers nothing when its time is up; a FIFO left by a killed waiter is cleared."""

from __future__ import annotations

import itertools
import os
import threading
import time
from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.mail import waits
from memkeeper.names import WAIT_DIR
from memkeeper.ops import mailwait

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.etcd_cluster import Cluster

ME, THEM, OTHER = "claude-code:s1", "codex:t2", "codex:t3"
_prefixes = itertools.count(1)


@pytest.fixture
def agents(
    sample: Path, store_kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str], Memory]]:
    """``agents(identity)``: a ``Memory`` on the test's store; the caps made long, so that only
    a wake-up can end a wait early."""
    if store_kind == "etcd":
        cluster: Cluster = request.getfixturevalue("cluster")
        for name, value in cluster.store_env(f"mailwait{next(_prefixes)}").items():
            monkeypatch.setenv(name, value)
    monkeypatch.setattr(waits, "WAKE_CAP_S", 60.0)
    monkeypatch.setattr(waits, "SHARED_CAP_S", 60.0)
    opened: list[Memory] = []

    def open_as(identity: str) -> Memory:
        opened.append(Memory.open(sample, agent=identity))
        return opened[-1]

    yield open_as
    for memory in opened:
        memory.close()


def send_later(memory: Memory, to: str, text: str, delay: float = 0.3) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        memory.mail.send(to, text)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_what_waits_already_is_answered_at_once(agents: Callable[[str], Memory]) -> None:
    them, me = agents(THEM), agents(ME)
    sent = them.mail.send(ME, "already here")
    started = time.monotonic()
    assert [m.id for m in me.mail.wait(30)] == [sent.id]
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("to", [ME, "all"])
def test_a_message_sent_meanwhile_wakes_the_waiter(
    agents: Callable[[str], Memory], to: str
) -> None:
    them, me = agents(THEM), agents(ME)
    me.mail.inbox()  # the store exists before the wait begins
    sender = send_later(them, to, "wake up")
    started = time.monotonic()
    found = me.mail.wait(30)
    took = time.monotonic() - started
    sender.join()
    assert [(m.sender, m.text) for m in found] == [(THEM, "wake up")]
    assert took < 5.0, f"woken after {took:.2f} s: not by the wake-up"


def test_a_message_to_someone_else_does_not_end_the_wait(
    agents: Callable[[str], Memory],
) -> None:
    them, me = agents(THEM), agents(ME)
    me.mail.inbox()
    sender = send_later(them, OTHER, "not yours", delay=0.05)
    started = time.monotonic()
    assert me.mail.wait(1.0) == []
    assert time.monotonic() - started >= 1.0
    sender.join()


@pytest.mark.sqlite_only
def test_a_fifo_left_by_a_killed_waiter_is_cleared_by_the_next(
    agents: Callable[[str], Memory], sample: Path
) -> None:
    me = agents(ME)
    home = sample / ".memkeeper" / WAIT_DIR
    home.mkdir(parents=True, exist_ok=True)
    dead = 2**22 + 12345  # above the kernel's pid_max: no process has it
    left = home / f"{waits.waiter_id(ME, dead, 1)}{waits.SUFFIX}"
    os.mkfifo(left)
    assert me.mail.wait(0.05) == []
    assert not left.exists()
    assert os.listdir(home) == []


@pytest.mark.sqlite_only
def test_without_a_store_a_wait_creates_none(sample: Path) -> None:
    me = Memory.open(sample, agent=ME)
    try:
        assert mailwait.wait(me.workspace, 0) == []
        assert not (sample / ".memkeeper" / "state.db").exists()
    finally:
        me.close()


def test_a_cancelled_wait_stops_at_its_next_look(agents: Callable[[str], Memory]) -> None:
    me = agents(ME)
    me.mail.inbox()
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    assert mailwait.wait(me.workspace, 30, cancel=cancel) == []
    assert time.monotonic() - started < 2.0
