"""The daemon's compaction: off unless the policy bounds the log; at its first look, then
every hour, its share of events a look, looking again at once while more is due; a failure
one ``error`` outcome an hour, never a crash."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper.daemon import compaction
from memkeeper.daemon.step import Daemon
from memkeeper.fs import keyring
from tests.daemon.conftest import RESCAN_S, actions

if TYPE_CHECKING:
    from pathlib import Path

    from memkeeper import Memory
    from memkeeper.clock import FakeClock
    from memkeeper.daemon.plan import Outcome


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    keyring.create({"XDG_CONFIG_HOME": str(tmp_path / "config")}, "human", "alice")


def bounded(home: Memory, text: str = "events:\n  keep: 2\n") -> Daemon:
    policy = home.root / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + text)
    daemon = Daemon(home.workspace, RESCAN_S, quiet_s=0)
    daemon.caught_up(first=True)
    return daemon


def compacted(outcomes: list[Outcome]) -> list[str]:
    return [o.detail for o in outcomes if o.action == "compacted"]


def emitted(home: Memory, count: int) -> None:
    for n in range(count):
        home.emit("task.done", {"n": n})


def test_without_a_bound_nothing_is_compacted(home: Memory, keyed: None) -> None:
    emitted(home, 5)
    daemon = Daemon(home.workspace, RESCAN_S, quiet_s=0)
    daemon.caught_up(first=True)
    assert "compacted" not in actions(daemon.step(set()))
    assert home.events()[0].id == 1


def through(home: Memory) -> int:
    """Where the log starts now: the id of the last event compacted."""
    return home.events()[0].id - 1


def test_its_first_look_compacts_then_it_looks_again_an_hour_later(
    home: Memory, clock: FakeClock, keyed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compaction, "SHARE", 2)
    emitted(home, 6)
    daemon = bounded(home)
    looks = [compacted(daemon.step(set())) for _ in range(6)]
    assert [len(found) for found in looks[:3]] == [1, 1, 1]  # a share a look, while more is due
    assert looks[-1] == []
    head = home.workspace.store.events_head()
    assert head is not None
    assert through(home) == head[0] - 2
    emitted(home, 2)
    clock.advance(60)
    assert compacted(daemon.step(set())) == []
    clock.advance(compaction.EVERY_S)
    assert compacted(daemon.step(set())) == [
        f"2 event(s): the log starts after event {through(home)}"
    ]


def test_a_failure_is_one_error_an_hour(home: Memory, clock: FakeClock) -> None:
    emitted(home, 5)  # and no key to sign a checkpoint with
    daemon = bounded(home)
    errors = [o.detail for o in daemon.step(set()) if o.action == "error"]
    assert len(errors) == 1
    assert errors[0].startswith("compaction: compacting signs a checkpoint")
    clock.advance(60)
    assert "error" not in actions(daemon.step(set()))
    assert home.events()[0].id == 1
