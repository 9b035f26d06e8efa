"""Waking a waiter when an event is recorded (``daemon.wakeups``), on both stores: the local
store's log watched in the memory home, a shared store's event keys watched in etcd — within
100 ms of the commit, with no polling; a stop ends the wait."""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper import Memory
from memkeeper.daemon.wakeups import LOOK_AGAIN_S, store_moves
from memkeeper.fs import dirwatch
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
_prefixes = itertools.count(1)
GOAL_S = 0.1


@pytest.fixture(
    params=["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
)
def memory(
    sample: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Memory]:
    if request.param == "etcd":
        cluster: Cluster = request.getfixturevalue("cluster")
        for name, value in cluster.store_env(f"wake{next(_prefixes)}").items():
            monkeypatch.setenv(name, value)
    opened = Memory.open(sample, agent="agent-a")
    yield opened
    opened.close()


def waking(memory: Memory, stop: threading.Event) -> tuple[queue.Queue[float], threading.Thread]:
    """The times ``store_moves`` wakes, from a thread; its first wake (the first read) done."""
    moves = store_moves(memory.workspace, stop)
    next(moves)  # the watch is up before the first read
    woke: queue.Queue[float] = queue.Queue()

    def run() -> None:
        for _ in moves:
            woke.put(time.monotonic())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return woke, thread


def drain(woke: queue.Queue[float]) -> None:
    while not woke.empty():
        woke.get_nowait()


def test_an_event_recorded_by_another_writer_wakes_the_waiter_within_100_ms(
    memory: Memory, sample: Path
) -> None:
    stop = threading.Event()
    woke, thread = waking(memory, stop)
    other = Memory.open(sample, agent="agent-b")
    took = []
    for n in range(5):
        time.sleep(0.2)  # quiet: any earlier wake-up is behind us
        drain(woke)
        start = time.monotonic()
        other.emit("task.completed", {"n": n})
        took.append(woke.get(timeout=5) - start)
        assert [e.data for e in memory.events()][-1] == {"n": n}
    other.close()
    stop.set()
    thread.join(2)
    assert not thread.is_alive()
    assert sorted(took)[len(took) // 2] < GOAL_S, took


def test_without_inotify_watchfiles_wakes_the_waiter_as_well(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dirwatch, "open_watch", lambda directory: None)
    stop = threading.Event()
    woke, thread = waking(memory, stop)
    time.sleep(0.2)
    drain(woke)
    start = time.monotonic()
    other = Memory.open(sample, agent="agent-b")
    other.emit("task.completed", {})
    assert woke.get(timeout=5) - start < GOAL_S
    other.close()
    stop.set()
    thread.join(2)
    assert not thread.is_alive()


def test_a_stop_ends_a_quiet_wait(memory: Memory) -> None:
    stop = threading.Event()
    _, thread = waking(memory, stop)
    time.sleep(0.1)
    stop.set()
    thread.join(1)
    assert not thread.is_alive()


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "watchfiles"])
def test_a_change_is_looked_at_again_after_it_for_a_commit_not_yet_readable(
    sample: Path, monkeypatch: pytest.MonkeyPatch, inotify: bool
) -> None:
    """A commit's pages reach the log (which wakes the waiter) a moment before the commit can
    be read: after the last change the waiter is woken twice more, then rests."""
    if not inotify:
        monkeypatch.setattr(dirwatch, "open_watch", lambda directory: None)
    memory = Memory.open(sample, agent="agent-a")
    memory.emit("task.started", {})  # the home and its log exist
    stop = threading.Event()
    woke, thread = waking(memory, stop)
    time.sleep(0.3)
    drain(woke)
    start = time.monotonic()
    # one change, one event: moved in whole (a write in place is a create and a modify, which
    # the watch may take as two changes, each owed its looks)
    outside = sample.parent / "scratch"
    outside.write_bytes(b"a write not yet readable")
    outside.rename(Path(memory.workspace.home) / "scratch")
    times = [woke.get(timeout=5) - start for _ in range(3)]
    time.sleep(0.5)
    assert woke.empty()  # then quiet until the heartbeat
    stop.set()
    thread.join(2)
    memory.close()
    assert not thread.is_alive()
    assert times[0] < GOAL_S
    assert LOOK_AGAIN_S[0] <= times[1] - times[0] < LOOK_AGAIN_S[0] + GOAL_S
    assert LOOK_AGAIN_S[1] <= times[2] - times[1] < LOOK_AGAIN_S[1] + GOAL_S
