"""The operations' context: the store opened on first use, paths confined, events stamped
with the clock and the agent, file locks; the transactions an operation writes in."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from memkeeper import Invalid
from memkeeper.clock import FakeClock
from memkeeper.ops.workspace import Workspace


def test_the_store_is_opened_on_first_use_and_closed_with_the_workspace(sample: Path) -> None:
    ws = Workspace(sample, "agent-a")
    assert not ws.store_opened
    assert not (sample / ".memkeeper").exists()
    assert ws.store.events() == []
    assert ws.store_opened
    assert (sample / ".memkeeper" / "state.db").is_file()
    ws.close()
    assert not ws.store_opened


def test_relpath_normalises_a_path_and_refuses_one_outside_the_root(ws: Workspace) -> None:
    assert ws.relpath("memory/./status.md") == "memory/status.md"
    with pytest.raises(Invalid, match="outside the memory root"):
        ws.relpath("../elsewhere.md")


def test_record_stamps_the_clocks_time_and_this_agent(sample: Path) -> None:
    clock = FakeClock(1_800_000_000.25)
    ws = Workspace(sample, "agent-z", clock)
    try:
        first = ws.record("task.completed", None, None, {"n": 1})
        clock.advance(61.5)
        second = ws.record("risk.found", "CLAUDE.md", "x", {}, actor="human")
    finally:
        ws.close()
    assert (first.ts, first.actor, first.data) == ("2027-01-15T08:00:00.250Z", "agent-z", {"n": 1})
    assert (second.ts, second.actor, second.path) == (
        "2027-01-15T08:01:01.750Z",
        "human",
        "CLAUDE.md",
    )
    assert second.prev == first.hash


def run_in_thread(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_locked_serialises_writers_of_one_file(ws: Workspace, sample: Path) -> None:
    other = Workspace(sample, "agent-b")
    order: list[str] = []
    holding, release = threading.Event(), threading.Event()

    def first() -> None:
        with ws.locked("CLAUDE.md"):
            holding.set()
            release.wait(5)
            order.append("first leaves")

    def second() -> None:
        with other.locked("CLAUDE.md"):
            order.append("second enters")

    try:
        one = run_in_thread(first)
        assert holding.wait(5)
        two = run_in_thread(second)
        two.join(0.1)
        assert two.is_alive()
        assert order == []
        release.set()
        one.join(5)
        two.join(5)
    finally:
        release.set()
        other.close()
    assert order == ["first leaves", "second enters"]


def test_locks_of_different_files_do_not_wait_for_each_other(ws: Workspace, sample: Path) -> None:
    other = Workspace(sample, "agent-b")
    entered = threading.Event()

    def elsewhere() -> None:
        with other.locked("AGENTS.md"):
            entered.set()

    try:
        with ws.locked("CLAUDE.md"):
            run_in_thread(elsewhere).join(5)
            assert entered.is_set()
    finally:
        other.close()
