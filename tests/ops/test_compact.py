"""Compaction: the oldest events, as the policy's ``events:`` lets them go, replaced by a signed
``compacted`` checkpoint from which the chain stays verifiable; never the newest event, never
without a key, never over events that are not intact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.checkpoints import COMPACTED
from memkeeper.clock import FakeClock
from memkeeper.errors import EnvironmentFailure, Failed, Invalid
from memkeeper.fs import keyring
from memkeeper.ops import compact as compaction
from memkeeper.ops.chain import verify_chain
from memkeeper.ops.compact import compact, compact_to, compacted_through, compaction_cut
from memkeeper.ops.emit import emit
from memkeeper.ops.views import history
from memkeeper.ops.workspace import Workspace
from memkeeper.store.sqlite import Store
from tests.etcd_cluster import Cluster, binary

if TYPE_CHECKING:
    from memkeeper.identity import keys

EXE, WHY = binary()
T0 = 1_800_000_000.0
DAY = 24 * 3600.0


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    return env


@pytest.fixture
def key(config: dict[str, str]) -> keys.Signer:
    return keyring.create(config, "human", "alice")[0]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def ws(sample: Path, key: keys.Signer, clock: FakeClock) -> Iterator[Workspace]:
    opened = Workspace(sample, "human", clock)
    assert opened.store is not None
    yield opened
    opened.close()


def emitted(ws: Workspace, count: int, clock: FakeClock | None = None, step: float = 0) -> None:
    for n in range(count):
        emit(ws, "task.done", {"n": n})
        if clock is not None:
            clock.advance(step)


def bound(sample: Path, text: str) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + text)


def ids(ws: Workspace) -> list[int]:
    return [e.id for e in ws.store.events()]


def test_a_policy_that_bounds_nothing_refuses_and_changes_nothing(ws: Workspace) -> None:
    emitted(ws, 3)
    with pytest.raises(Invalid, match="the policy keeps every event"):
        compact(ws)
    assert ids(ws) == [1, 2, 3]


def test_keep_compacts_beyond_the_newest_and_the_chain_stays_verifiable(
    ws: Workspace, sample: Path
) -> None:
    bound(sample, "events:\n  keep: 2\n")
    emitted(ws, 5)
    assert compact(ws) == {"compacted": 3, "removed": 3, "more": False}
    assert ids(ws) == [4, 5]
    assert compacted_through(ws) == 3
    full = verify_chain(ws, full=True)
    assert (full.violations, full.since, full.compacted, full.length) == ([], 3, 3, 5)
    emitted(ws, 1)
    assert verify_chain(ws).violations == []
    assert compact(ws)["removed"] == 1
    assert compact(ws)["removed"] == 0


def test_keep_days_compacts_what_is_older(ws: Workspace, sample: Path, clock: FakeClock) -> None:
    bound(sample, "events:\n  keep_days: 2\n")
    emitted(ws, 4, clock, DAY)  # at T0, T0 + 1, + 2, + 3 days; now is T0 + 4 days
    assert compaction_cut(ws.store, 4, 2, None, clock.now()) == 2
    assert compact(ws)["compacted"] == 2
    assert ids(ws) == [3, 4]


def test_the_two_bounds_each_let_go_what_they_would_alone(ws: Workspace, clock: FakeClock) -> None:
    emitted(ws, 6, clock, DAY)
    now = clock.now()
    assert compaction_cut(ws.store, 6, 2, None, now) == 4
    assert compaction_cut(ws.store, 6, None, 5, now) == 1
    assert compaction_cut(ws.store, 6, 2, 5, now) == 4
    assert compaction_cut(ws.store, 6, 30, 1, now) == 5
    assert compaction_cut(ws.store, 6, 30, None, now) == 0


def test_the_newest_event_is_never_compacted(ws: Workspace, clock: FakeClock) -> None:
    emitted(ws, 3)
    clock.advance(10 * DAY)
    assert compaction_cut(ws.store, 3, 1, 1, clock.now()) == 2
    compact_to(ws, 1, 1)
    assert ids(ws) == [3]


def test_without_a_key_nothing_is_compacted(
    sample: Path, config: dict[str, str], clock: FakeClock
) -> None:
    ws = Workspace(sample, "human", clock)
    try:
        emitted(ws, 3)
        with pytest.raises(EnvironmentFailure, match="no key"):
            compact_to(ws, None, 1)
        assert ids(ws) == [1, 2, 3]
    finally:
        ws.close()


def test_events_that_are_not_intact_are_kept_for_verify_to_name(ws: Workspace) -> None:
    emitted(ws, 5)
    store = ws.store
    assert isinstance(store, Store)
    store._db.execute("UPDATE events SET actor = 'mallory' WHERE id = 2")
    with pytest.raises(Failed) as failed:
        compact_to(ws, None, 1)
    assert [v.message for v in failed.value.violations] == [
        "event 2: its hash does not match its content: the event was edited"
    ]
    assert ids(ws) == [1, 2, 3, 4, 5]
    assert verify_chain(ws, full=True).violations


def test_a_compaction_goes_in_batches_each_moving_the_checkpoint(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compaction, "LOCAL_BATCH", 2)
    emitted(ws, 7)
    store = ws.store
    assert isinstance(store, Store)
    # Event 5 is not intact: the batches before it go, and the log starts at a checkpoint.
    store._db.execute("UPDATE events SET actor = 'mallory' WHERE id = 5")
    with pytest.raises(Failed, match="compaction stopped after event 4"):
        compact_to(ws, None, 1)
    assert ids(ws) == [5, 6, 7]
    assert compacted_through(ws) == 4
    assert [v.message.split(":")[0] for v in verify_chain(ws, full=True).violations] == ["event 5"]


def test_a_limit_leaves_the_rest_for_later(ws: Workspace) -> None:
    emitted(ws, 6)
    assert compact_to(ws, None, 1, limit=2) == {"compacted": 2, "removed": 2, "more": True}
    assert compact_to(ws, None, 1, limit=2) == {"compacted": 4, "removed": 2, "more": True}
    assert compact_to(ws, None, 1, limit=2) == {"compacted": 5, "removed": 1, "more": False}


def test_tampering_just_after_the_compaction_point_is_caught(ws: Workspace) -> None:
    emitted(ws, 4)
    compact_to(ws, None, 2)
    store = ws.store
    assert isinstance(store, Store)
    store._db.execute("UPDATE events SET prev = 'sha256:x' WHERE id = 3")
    found = [v.message for v in verify_chain(ws, full=True).violations]
    assert "event 3: its prev does not match the previous event's hash" in found


def test_a_forged_compaction_point_is_reported_and_stops_compaction(ws: Workspace) -> None:
    emitted(ws, 5)
    compact_to(ws, None, 3)
    cp = ws.store.chain_checkpoint(COMPACTED)
    assert cp is not None
    ws.store.put_chain_checkpoint(cp._replace(hash="sha256:" + "2" * 64))
    report = verify_chain(ws, full=True)
    assert [v.rule for v in report.violations] == ["checkpoint", "event-chain"]
    assert "the compacted checkpoint" in report.violations[0].message
    assert "restore .memkeeper/ from a backup" in report.violations[0].fix
    with pytest.raises(Failed, match="compaction point cannot be vouched for"):
        compact_to(ws, None, 1)
    assert ids(ws) == [3, 4, 5]


def test_a_sections_history_says_where_the_log_was_compacted(ws: Workspace) -> None:
    assert history(ws, "CLAUDE.md#build")["compacted"] == 0
    emitted(ws, 3)
    compact_to(ws, None, 1)
    assert history(ws, "CLAUDE.md#build")["compacted"] == 2


@pytest.mark.skipif(EXE is None, reason=WHY)
def test_on_a_shared_store_it_goes_thirty_events_a_transaction(
    sample: Path,
    key: keys.Signer,
    clock: FakeClock,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster: Cluster = request.getfixturevalue("cluster")
    for name, value in cluster.store_env("compact1").items():
        monkeypatch.setenv(name, value)
    shared = Workspace(sample, "human", clock)
    try:
        assert shared.shared
        emitted(shared, 65)
        assert compact_to(shared, None, 2) == {"compacted": 63, "removed": 63, "more": False}
        assert ids(shared) == [64, 65]
        full = verify_chain(shared, full=True)
        assert (full.violations, full.since, full.checkpoint) == ([], 63, 65)
        emitted(shared, 1)
        routine = verify_chain(shared)
        assert (routine.since, routine.checked, routine.checkpoint) == (65, 1, 66)
    finally:
        shared.close()
