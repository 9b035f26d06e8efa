"""The contract of meetings: added with rising ids, read back whole, listed until resolved
unless asked, replaced by ``put_meeting``; a read, a compare of ``rev`` and a put inside
``writing()`` are one compare-and-swap (on etcd: a racing writer's commit fails, and the
retry sees the new rev)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from memkeeper.meetings import rules
from memkeeper.meetings.records import Meeting, Plan
from tests.store.contract.conftest import NOW, etcd_on, etcd_only, retrying

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore
    from memkeeper.store.protocol import StateStore
    from tests.etcd_cluster import Cluster

A, B = "claude-code:s1", "codex:t2"


def opened() -> Meeting:
    return rules.opened(0, A, [B], ["CLAUDE.md"], NOW, claims=["c1"], reason="overlap")


def test_meetings_are_kept_whole_and_listed_until_resolved(store: StateStore) -> None:
    with store.writing():
        first = store.meetings.add_meeting(opened())
        second = store.meetings.add_meeting(opened())
    assert (first.id, second.id) == (1, 2)
    assert store.meetings.meeting(1) == first
    assert store.meetings.meeting(99) is None
    split = rules.plan("split", first, assign={A: ["CLAUDE.md#a"], B: ["CLAUDE.md#b"]})
    proposed = rules.propose(first, B, split, NOW + 1)
    done = rules.resolved(rules.accept(proposed, A, 1), A, split, NOW + 2)
    with store.writing():
        store.meetings.put_meeting(done)
    assert store.meetings.meeting(1) == done
    assert store.meetings.meeting(1).resolution == split  # type: ignore[union-attr]
    assert [m.id for m in store.meetings.meetings()] == [2]
    assert [m.id for m in store.meetings.meetings(resolved=True)] == [1, 2]


def test_a_record_round_trips_every_field(store: StateStore) -> None:
    m = replace(
        opened(),
        owners=("@org/docs", "@alice"),
        offers=rules.propose(opened(), A, Plan("handoff", (), B, "yours"), NOW).offers,
        joint=("c7",),
    )
    with store.writing():
        added = store.meetings.add_meeting(m)
    assert store.meetings.meeting(added.id) == replace(m, id=added.id)


def test_serializing_meetings_are_those_taking_turns_until_the_last(store: StateStore) -> None:
    with store.writing():
        m = store.meetings.add_meeting(opened())
        store.meetings.add_meeting(opened())
    assert store.meetings.serializing_meetings() == []
    turns = rules.resolved(m, "human", Plan("serialize", who=B), NOW, (), {A: ["c1"]})
    with store.writing():
        store.meetings.put_meeting(turns)
    assert store.meetings.serializing_meetings() == [turns]
    assert store.meetings.meeting(m.id) == turns  # order, turn, standing round-trip
    assert [x.id for x in store.meetings.meetings()] == [1, 2]  # not resolved yet
    last = replace(turns, rev=turns.rev + 1, state="resolved", turn=1, settled_at=NOW + 5)
    with store.writing():
        store.meetings.put_meeting(last)
    assert store.meetings.serializing_meetings() == []
    assert store.meetings.kept_meetings() == [(1, NOW + 5)]


def test_kept_meetings_are_the_resolved_ones_and_drop_forgets_them(store: StateStore) -> None:
    with store.writing():
        ms = [store.meetings.add_meeting(opened()) for _ in range(3)]
        for m, at in ((ms[0], NOW + 1), (ms[2], NOW + 3)):
            store.meetings.put_meeting(rules.resolved(m, A, Plan("join"), at))
    assert store.meetings.kept_meetings() == [(1, NOW + 1), (3, NOW + 3)]
    with store.writing():
        store.meetings.drop_meetings([1])
    assert store.meetings.meeting(1) is None
    assert store.meetings.kept_meetings() == [(3, NOW + 3)]
    assert [m.id for m in store.meetings.meetings(resolved=True)] == [2, 3]


@etcd_only
def test_a_stale_read_loses_the_commit_and_the_retry_sees_the_new_rev(
    cluster: Cluster, prefix: bytes
) -> None:
    one, two = etcd_on(cluster, prefix), etcd_on(cluster, prefix)
    try:
        with one.writing():
            m = one.meetings.add_meeting(opened())
        seen: list[int] = []

        def bump(store: EtcdStore, sneak: bool) -> None:
            current = store.meetings.meeting(m.id)
            assert current is not None
            seen.append(current.rev)
            if sneak and len(seen) == 1:  # another writer gets in between read and commit
                with two.writing():
                    two.meetings.put_meeting(replace(current, rev=current.rev + 1))
            store.meetings.put_meeting(replace(current, rev=current.rev + 1))

        retrying(one, lambda: bump(one, True))
        assert seen == [1, 2]
        assert one.meetings.meeting(m.id).rev == 3  # type: ignore[union-attr]
    finally:
        one.close()
        two.close()
