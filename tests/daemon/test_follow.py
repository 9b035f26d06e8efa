"""The watch daemon under a shared etcd store (``daemon.follow``): another root's patches
brought into this root's files, a partition of this root from the store and its recovery.
Same setup as ``test_step``, on two roots sharing one etcd prefix."""

from __future__ import annotations

import base64
import itertools
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.daemon import follow as follow_module
from memkeeper.daemon.loop import run
from memkeeper.daemon.plan import QUIET_S, Outcome
from memkeeper.daemon.step import Daemon
from memkeeper.store.etcd import EtcdStore
from tests.conftest import SAMPLE_REPO
from tests.daemon.conftest import (
    ADDED,
    RESCAN_S,
    Never,
    Raw,
    Script,
    actions,
    append_line,
    changed,
    no_sleep,
    ticks,
)
from tests.etcd_cluster import Cluster, binary

# the roots sharing a store are git repositories (their files' histories)
pytestmark = pytest.mark.peer("git")

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock

EXE, WHY = binary()
needs_etcd = pytest.mark.skipif(EXE is None, reason=WHY)
_prefixes = itertools.count(1)


class LaterTime:
    """``time`` for ``daemon.follow`` (its "written in the last second" check) that runs
    ``ahead`` seconds ahead of the real one."""

    def __init__(self, ahead: float) -> None:
        self.ahead = ahead

    def time(self) -> float:
        return time.time() + self.ahead


@pytest.fixture
def pair(
    tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> Iterator[tuple[Memory, Memory]]:
    """Roots a and b on one etcd prefix, both agreeing with the store; b is the watcher's."""
    for name, value in cluster.store_env(f"review{next(_prefixes)}").items():
        monkeypatch.setenv(name, value)
    roots = []
    for name in ("a", "b"):
        shutil.copytree(SAMPLE_REPO, tmp_path / name)
        subprocess.run(["git", "init", "-q", str(tmp_path / name)], check=True)
        roots.append(tmp_path / name)
    a, b = Memory(roots[0], "agent-a", clock=clock), Memory(roots[1], "watcher", clock=clock)
    for memory in (a, b):
        for rel in ("CLAUDE.md", "AGENTS.md", "memory/status.md"):
            memory.workspace.sync_file(rel)
    yield a, b
    a.close()
    b.close()


def woken(d: Daemon, timeout: float = 5.0) -> None:
    """Wait until the store watch says there is something new."""
    watch = d.store_watch
    assert watch is not None
    assert watch.moved.wait(timeout)


def partition(memory: Memory) -> Callable[[], None]:
    """Cut ``memory``'s root off the store (its gateway points at a closed port); the
    returned function heals it."""
    store = memory.workspace.store
    assert isinstance(store, EtcdStore)
    gateway = store.gateway
    real = list(gateway.endpoints)
    gateway.close()
    gateway.endpoints = [("127.0.0.1", 1)]

    def heal() -> None:
        gateway.endpoints = real

    return heal


def patch_build(memory: Memory, line: str) -> None:
    section = memory.read("CLAUDE.md#build")
    memory.patch("CLAUDE.md#build", section.content + line, expect_rev=section.rev)


@pytest.fixture
def follower(pair: tuple[Memory, Memory], monkeypatch: pytest.MonkeyPatch) -> Daemon:
    monkeypatch.setattr(follow_module, "time", LaterTime(10.0))  # files are not "just written"
    _, b = pair
    started = Daemon(b.workspace, RESCAN_S, quiet_s=QUIET_S)
    started.caught_up(first=True)
    return started


@needs_etcd
def test_another_roots_patch_reaches_this_root_on_the_tick_after_it(
    pair: tuple[Memory, Memory], follower: Daemon
) -> None:
    a, b = pair
    woken(follower)
    follower.step(set())
    patch_build(a, "- from a\n")
    woken(follower)
    assert "synced" in actions(follower.step(set()))
    assert "- from a\n" in (b.root / "CLAUDE.md").read_text()


@needs_etcd
def test_another_roots_patch_while_a_human_edits_here_keeps_both(
    pair: tuple[Memory, Memory], follower: Daemon, clock: FakeClock
) -> None:
    a, b = pair
    here = b.root / "CLAUDE.md"
    batch = changed(
        b.root, "CLAUDE.md", lambda t: t.replace("## Testing\n", "## Testing\n- mine\n")
    )
    assert "synced" not in actions(follower.step(batch))  # waits for quiet
    patch_build(a, "- from a\n")
    woken(follower)
    follower.step(set())
    assert "- mine\n" in here.read_text()  # not replaced while the human's save waits
    for _ in range(20):
        clock.advance(0.1)
        follower.step(set())
    text = here.read_text()
    assert "- mine\n" in text
    assert "- from a\n" in text
    assert "- mine" in a.read("CLAUDE.md#testing").content  # pushed


@needs_etcd
def test_a_partition_is_one_error_then_everything_missed_is_caught_up(
    pair: tuple[Memory, Memory], follower: Daemon, clock: FakeClock
) -> None:
    a, b = pair
    woken(follower)
    follower.step(set())
    heal = partition(b)
    batch = changed(b.root, "AGENTS.md", append_line)
    first = follower.step(batch)
    assert actions(first) == ["error"]
    assert "unavailable" in first[0].detail
    patch_build(a, "- while b was cut off\n")  # the store moves meanwhile
    assert follower.step(set()) == []  # backing off: not even tried
    clock.advance(0.2)
    assert follower.step(set()) == []  # tried again, still down: not said again
    heal()
    done: list[Outcome] = []
    for _ in range(30):
        clock.advance(0.1)
        done += follower.step(set())
    assert actions(done)[:1] == ["synced"]
    assert "- while b was cut off\n" in (b.root / "CLAUDE.md").read_text()
    assert "more" in a.read("AGENTS.md").content  # b's save during the outage, pushed


@needs_etcd
def test_a_clock_stepped_back_during_an_outage_does_not_stop_the_retries(
    pair: tuple[Memory, Memory], follower: Daemon, clock: FakeClock
) -> None:
    _, b = pair
    heal = partition(b)
    assert actions(follower.step(changed(b.root, "AGENTS.md", append_line))) == ["error"]
    heal()
    clock.set(clock.now() - 3600)
    done: list[Outcome] = []
    for _ in range(60):  # six seconds: more than the longest back-off (5 s)
        clock.advance(0.1)
        done += follower.step(set())
    assert "synced" in actions(done)


@needs_etcd
def test_a_store_blip_while_bringing_a_file_up_to_date_is_retried(
    pair: tuple[Memory, Memory], follower: Daemon, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    woken(follower)
    ticks(follower, clock, 2 * QUIET_S)
    patch_build(a, "- from a\n")
    woken(follower)
    real, blipped = b.workspace.sync_file, list[bool]()

    def blip(rel: str) -> None:
        if not blipped:  # the store is unreachable for this one call
            blipped.append(True)
            heal = partition(b)
            try:
                real(rel)
            finally:
                heal()
        real(rel)

    monkeypatch.setattr(b.workspace, "sync_file", blip)
    first = follower.step(set())
    assert blipped
    assert "error" in actions(first)
    ticks(follower, clock, 2.0)
    assert "- from a\n" in (b.root / "CLAUDE.md").read_text()


@needs_etcd
def test_a_new_directory_during_an_outage_does_not_end_the_daemon(
    pair: tuple[Memory, Memory], clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follow_module, "time", LaterTime(10.0))
    _, b = pair
    heals: list[Callable[[], None]] = []

    def cut_off_and_mkdir() -> Raw:
        heals.append(partition(b))
        (b.root / "memory/teams").mkdir()
        (b.root / "memory/teams/search.md").write_text("# Search\n\nhi\n")
        return {(ADDED, str(b.root / "memory/teams"))}

    def heal_later() -> Raw:
        heals[0]()
        clock.advance(1.0)
        return set()

    def later() -> Raw:
        clock.advance(1.0)
        return set()

    script = Script([cut_off_and_mkdir, heal_later, later, later])
    outcomes = list(run(b.workspace, script, Never(), quiet_s=0, pause=no_sleep))
    assert actions(outcomes)[-1] == "stopped"
    assert b.workspace.store.file_state("memory/teams/search.md") is not None


@needs_etcd
def test_a_quiet_tick_under_a_shared_store_asks_the_store_nothing(
    pair: tuple[Memory, Memory], follower: Daemon, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, b = pair
    woken(follower)
    ticks(follower, clock, 2 * QUIET_S)  # the first look's files indexed, nothing waits
    assert follower.pending == {}
    store = b.workspace.store
    assert isinstance(store, EtcdStore)
    calls: list[str] = []
    real = store.gateway.call

    def counted(path: str, body: dict[str, object]) -> dict[str, object]:
        calls.append(base64.b64decode(str(body.get("key", ""))).decode(errors="replace"))
        return real(path, body)

    monkeypatch.setattr(store.gateway, "call", counted)
    if follower.store_watch is not None and follower.store_watch.moved.is_set():
        follower.step(set())
        calls.clear()
    assert follower.step(set()) == []
    assert calls == []  # found: the claims' keys, for earliest_expiry
