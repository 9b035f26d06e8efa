"""The daemon's tests' setup: a ``Daemon`` on a copy of sample-repo (``sample``) with a fake
clock, fed one batch of ``(change, absolute path)`` at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.clock import FakeClock
from memkeeper.daemon.step import Daemon
from memkeeper.ops.setup import init

if TYPE_CHECKING:
    from pathlib import Path

RESCAN_S = 30.0
ADDED, MODIFIED, DELETED = 1, 2, 3  # watchfiles' Change values


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def home(sample: Path, clock: FakeClock) -> Memory:
    """The sample, initialised; the daemon's ``Memory`` on the fake clock."""
    memory = Memory(sample, "watcher", clock=clock)
    init(memory.workspace, None)
    return memory


@pytest.fixture
def daemon(home: Memory) -> Daemon:
    """A daemon that has started (its first catch-up is behind it)."""
    started = Daemon(home.workspace, RESCAN_S, quiet_s=0)
    started.caught_up(first=True)
    return started
