"""The daemon's tests' setup: a ``Daemon`` on a copy of sample-repo (``sample``) with a fake
clock, fed one batch of ``(change, absolute path)`` at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence, Set
from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.clock import FakeClock
from memkeeper.daemon.step import Daemon
from memkeeper.ops.setup import init

if TYPE_CHECKING:
    from pathlib import Path

    from memkeeper.daemon.plan import Outcome

RESCAN_S = 30.0
ADDED, MODIFIED, DELETED = 1, 2, 3  # watchfiles' Change values
Raw = Set[tuple[int, str]]
Step = Callable[[], Raw]


class Script:
    """A change source that plays its steps in order, across restarts of the watch; like
    watchfiles, each watch yields an empty batch first, once it is up."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self.watched: list[tuple[str, ...]] = []

    def watch(self, dirs: Sequence[str], stop: object) -> Iterator[Raw]:
        self.watched.append(tuple(dirs))
        return self._play()

    def _play(self) -> Iterator[Raw]:
        yield set()
        while self.steps:
            yield self.steps.pop(0)()


class Never:
    def is_set(self) -> bool:
        return False


def no_sleep(seconds: float) -> None:
    raise AssertionError(f"the daemon slept {seconds} s in a test")


def actions(outcomes: Sequence[Outcome]) -> list[str]:
    return [o.action for o in outcomes]


def changed(root: Path, rel: str, edit: Callable[[str], str]) -> set[tuple[int, str]]:
    """Save ``rel`` as an editor would; the batch a watcher reports for it."""
    path = root / rel
    path.write_text(edit(path.read_text()))
    return {(MODIFIED, str(path))}


def append_line(text: str) -> str:
    return text + "\nmore\n"


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


def ticks(daemon: Daemon, clock: FakeClock, seconds: float, every: float = 0.1) -> list[Outcome]:
    """Quiet ticks, ``every`` seconds, for ``seconds``: what they all did."""
    done: list[Outcome] = []
    for _ in range(round(seconds / every)):
        clock.advance(every)
        done += daemon.step(set())
    return done
