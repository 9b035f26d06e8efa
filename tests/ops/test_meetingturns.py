"""A ``serialize`` resolution kept as a hand-over by the store (issue 24): the meeting stays
``serializing`` while the first participant holds the contested targets; a release (a
completion, an abandon, an expiry, a narrowing away) grants them to the next participant in
the same claims transaction — a fresh token, ``meeting.handed_over``, one message — and the
last turn resolves the meeting. A participant whose own claims ended meanwhile is skipped;
two settlements at once hand over once."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from memkeeper.ops import meetings, meetingturns
from memkeeper.ops.meetings import How

if TYPE_CHECKING:
    import pytest

    from memkeeper import Memory
    from memkeeper.clock import FakeClock
    from memkeeper.meetings.records import Meeting
    from memkeeper.store.protocol import MeetingStore
    from tests.ops.conftest import Agents

A, B, C = "claude-code:s1", "codex:t2", "codex:t3"


def held(memory: Memory) -> dict[str, tuple[str, ...]]:
    return {c.agent: c.targets for c in memory.claims()}


def serialized(a: Memory, human: Memory, first: str, *others: str) -> None:
    meetings.open_meeting(a.workspace, list(others), ["docs/"])
    m = meetings.resolve(human.workspace, 1, 1, how=How("serialize", who=first))
    assert (m.state, m.order[0], m.turn) == ("serializing", first, 0)


def test_a_release_hands_the_targets_to_the_next_at_once(agents: Agents) -> None:
    a, b, human = agents(A), agents(B), agents("human")
    first = a.claim(["docs/"], strict=True)
    serialized(a, human, A, B)
    assert held(a) == {A: ("docs/",)}
    assert b.meetings.show(1).state == "serializing"
    a.release(first.id)
    (granted,) = b.claims()
    assert (granted.agent, granted.targets, granted.strict) == (B, ("docs/",), True)
    assert granted.token > first.token
    m = b.meetings.show(1)
    assert (m.state, m.turn, m.rev) == ("resolved", 1, 3)
    (over,) = [e for e in a.events() if e.type == "meeting.handed_over"]
    assert (over.data["to"], over.data["claim"], over.data["from"]) == (B, granted.id, A)
    told = [m for m in b.mail.inbox() if "your turn" in m.text]
    assert len(told) == 1
    assert granted.id in told[0].text
    assert not meetingturns.due(b.workspace)  # nothing more to hand over
    assert len([e for e in a.events() if e.type == "meeting.handed_over"]) == 1


def test_the_holder_keeps_its_turn_while_it_holds_any_contested_target(agents: Agents) -> None:
    a, human = agents(A), agents("human")
    first = a.claim(["docs/", "src/"], strict=True)
    serialized(a, human, A, B)
    a.renew(first.id, 60)
    assert held(a) == {A: ("docs/", "src/")}
    assert a.meetings.show(1).state == "serializing"


def test_a_completion_and_an_expiry_hand_over_too(agents: Agents, clock: FakeClock) -> None:
    a, b, c, human = agents(A), agents(B), agents(C), agents("human")
    first = a.claim(["docs/"], strict=True, ttl=30)
    serialized(a, human, A, B, C)
    a.claims.complete(first.id)
    (second,) = b.claims()
    assert second.agent == B
    clock.advance(second.expires_at - clock.now() + 1)
    meetings.settle(c.workspace)  # the channel's delivery: expired, handed on
    assert held(c) == {C: ("docs/",)}
    m = c.meetings.show(1)
    assert (m.state, m.turn) == ("resolved", 2)


def test_one_whose_own_claim_ended_is_skipped(agents: Agents) -> None:
    a, b, c, human = agents(A), agents(B), agents(C), agents("human")
    mine = b.claim(["docs/", "notes/"], strict=True)
    serialized(a, human, A, B, C)  # B gives docs/ up to wait its turn: keeps notes/
    assert held(b)[B] == ("notes/",)
    (first,) = [c for c in a.claims() if c.agent == A]
    b.release(mine.id)  # B leaves before its turn
    a.release(first.id)
    assert held(c) == {C: ("docs/",)}
    (skip,) = [e for e in a.events() if e.type == "meeting.skipped"]
    assert skip.data["agent"] == B
    assert "left" in skip.data["reason"]
    assert c.meetings.show(1).skipped[0][0] == B


def test_two_settlements_at_once_hand_over_once(agents: Agents, clock: FakeClock) -> None:
    a, b, c, human = agents(A), agents(B), agents(C), agents("human")
    first = a.claim(["docs/"], strict=True, ttl=30)
    serialized(a, human, A, B, C)
    clock.advance(first.expires_at - clock.now() + 1)
    assert meetingturns.due(b.workspace)
    assert meetingturns.due(c.workspace)
    start, failed = threading.Barrier(2), []

    def deliver(memory: Memory) -> None:
        try:
            start.wait()
            meetings.settle(memory.workspace)
        except Exception as exc:  # pragma: no cover - shown by the assertion below
            failed.append(exc)

    threads = [threading.Thread(target=deliver, args=(m,)) for m in (b, c)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == []
    assert held(a) == {B: ("docs/",)}
    over = [e for e in a.events() if e.type == "meeting.handed_over"]
    assert [e.data["to"] for e in over] == [B]
    assert a.meetings.show(1).rev == 3


def test_a_stale_meeting_is_never_handed_over(agents: Agents) -> None:
    a, b, human = agents(A), agents(B), agents("human")
    first = a.claim(["docs/"], strict=True)
    serialized(a, human, A, B)
    stale = a.meetings.show(1)
    a.release(first.id)  # handed over: rev 3
    from memkeeper.meetings import turns
    from memkeeper.ops.claims import ClaimTable

    table = ClaimTable(b.workspace)
    with table.transaction() as now:
        turn = turns.next_turn(stale, [], now)
        assert turn is not None
        meetingturns._apply(table, stale, turn, now)  # judged on rev 2: refused
    assert [c.agent for c in b.claims()] == [B]
    assert b.meetings.show(1).rev == 3


def test_a_scope_change_that_lets_the_contested_targets_go_hands_over(agents: Agents) -> None:
    a, b, human = agents(A), agents(B), agents("human")
    first = a.claim(["docs/", "src/"], strict=True)
    serialized(a, human, A, B)
    a.claims.scope(first.id, remove=["docs/"])
    assert held(b) == {A: ("src/",), B: ("docs/",)}
    assert b.meetings.show(1).state == "resolved"


def test_a_grant_or_a_renewal_asks_nothing_of_the_meetings(
    agents: Agents, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, human = agents(A), agents("human")
    first = a.claim(["docs/"], strict=True)
    serialized(a, human, A, B)
    asked: list[str] = []
    rows = type(a.workspace.store.meetings)  # the store's meetings, made at each use
    real = rows.serializing_meetings

    def counted(self: MeetingStore) -> list[Meeting]:
        asked.append("x")
        return real(self)

    monkeypatch.setattr(rows, "serializing_meetings", counted)
    a.claim(["notes/"])
    a.renew(first.id, 60)
    assert asked == []
    a.release(first.id)
    assert asked == ["x"]


def test_the_daemons_sweep_of_an_expired_holder_hands_over(
    agents: Agents, clock: FakeClock
) -> None:
    a, b, human = agents(A), agents(B), agents("human")
    first = a.claim(["docs/"], strict=True, ttl=30)
    serialized(a, human, A, B)
    clock.advance(first.expires_at - clock.now() + 1)
    (expired,) = human.sweep_claims()  # the daemon's tick
    assert expired.id == first.id
    assert held(b) == {B: ("docs/",)}
    assert [m.text for m in b.mail.inbox() if "your turn" in m.text] != []
