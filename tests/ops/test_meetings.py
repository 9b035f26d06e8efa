"""Meetings as operations: opened, proposed to, accepted and resolved, each change a
compare-and-swap on the meeting's rev and a message to each other participant; a split
leaves each claim its part, and a write outside one's part is refused as any write into
another's strict claim; a deadline passed escalates when next read, naming CODEOWNERS'
owners; a human resolves an escalated meeting with any plan."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper.errors import Invalid, Refused
from memkeeper.meetings.rules import StaleMeeting
from memkeeper.ops import meetings
from memkeeper.ops.claimwrites import check_write
from memkeeper.ops.meetings import How

if TYPE_CHECKING:
    from pathlib import Path

    from memkeeper import Memory
    from memkeeper.clock import FakeClock
    from tests.ops.conftest import Agents

A, B = "claude-code:s1", "codex:t2"
BUILD, TESTING = "CLAUDE.md#inventory-service/build", "CLAUDE.md#inventory-service/testing"


def held(memory: Memory) -> dict[str, tuple[str, ...]]:
    return {c.agent: c.targets for c in memory.claims()}


def test_a_split_agreed_by_both_leaves_each_its_part_and_fences_the_rest(agents: Agents) -> None:
    a, b = agents(A), agents(B)
    a.claim(["CLAUDE.md", "src/"], strict=True)
    m = meetings.open_meeting(b.workspace, [A], ["CLAUDE.md"], reason="both need it")
    assert (m.id, m.rev, m.state, m.participants) == (1, 1, "open", (B, A))
    split = How("split", {A: ["CLAUDE.md#build"], B: ["CLAUDE.md#testing"]})
    m = meetings.propose(b.workspace, 1, 1, split)
    assert m.offers[0].plan.assign == ((A, (BUILD,)), (B, (TESTING,)))
    m = meetings.accept(a.workspace, 1, 2, 1)
    m = meetings.resolve(a.workspace, 1, 3, proposal=1)
    assert (m.state, m.rev, m.resolved_by) == ("resolved", 4, A)
    assert held(a) == {A: ("src/", BUILD), B: (TESTING,)}
    with pytest.raises(Refused, match=f"{B} holds strict write claim") as refused:
        check_write(a.workspace, "CLAUDE.md", "inventory-service/testing", None)
    assert refused.value.reason == "claimed"
    assert check_write(a.workspace, "CLAUDE.md", "inventory-service/build", None) == ()
    with pytest.raises(Refused):
        check_write(b.workspace, "CLAUDE.md", "inventory-service/build", None)
    types = [e.type for e in a.events() if e.type.startswith(("meeting.", "claim."))]
    assert types == [
        "claim.granted", "meeting.opened", "meeting.proposed", "meeting.accepted",
        "meeting.resolved", "claim.narrowed", "claim.granted",
    ]  # fmt: skip
    told = [m.text for m in a.mail.inbox() if m.sender == B]
    assert told[0] == f"{B} opened meeting 1 on CLAUDE.md (both need it)"
    assert told[1].startswith(f"{B} proposes in meeting 1 (rev 2): split")
    assert told[1].endswith("memkeeper meeting accept 1 1 --expect-rev 2")
    assert [m.sender for m in b.mail.inbox()] == [A, A]  # accepted, resolved


def test_a_stale_rev_changes_nothing_and_answers_with_the_meeting(agents: Agents) -> None:
    a, b = agents(A), agents(B)
    meetings.open_meeting(a.workspace, [B], ["docs/"])
    meetings.propose(a.workspace, 1, 1, How("handoff", who=B))
    before = len(a.events())
    with pytest.raises(StaleMeeting) as stale:
        meetings.accept(b.workspace, 1, 1, 1)
    assert stale.value.to_json()["current"]["rev"] == 2
    assert len(a.events()) == before
    with pytest.raises(StaleMeeting):
        meetings.resolve(b.workspace, 1, 1, how=How("escalate"))


def test_a_participant_cannot_resolve_alone_but_a_human_can(agents: Agents) -> None:
    a, b, human = agents(A), agents(B), agents("human")
    b.claim(["docs/"], strict=True)
    meetings.open_meeting(a.workspace, [B], ["docs/"])
    with pytest.raises(Invalid, match="every participant accepted"):
        meetings.resolve(a.workspace, 1, 1, how=How("handoff", who=A))
    m = meetings.resolve(human.workspace, 1, 1, how=How("handoff", who=A))
    assert m.resolved_by == "human"
    assert held(a) == {A: ("docs/",)}
    with pytest.raises(Invalid, match="is resolved"):
        meetings.propose(a.workspace, 1, 2, How("join"))


def test_serialize_gives_the_first_the_targets(agents: Agents) -> None:
    a, human = agents(A), agents("human")
    a.claim(["docs/"])
    meetings.open_meeting(a.workspace, [B], ["docs/"])
    meetings.resolve(human.workspace, 1, 1, how=How("serialize", who=B))
    assert held(a) == {B: ("docs/",)}
    assert "claim.released" in [e.type for e in a.events()]
    (told,) = [m for m in a.mail.inbox() if "resolved" in m.text]
    assert told.text.endswith(
        f"then, in turn, {A}: each is granted docs/ once the one before holds them no more"
    )


def test_join_shares_the_holders_claim_for_writes(agents: Agents) -> None:
    a, b, human = agents(A), agents(B), agents("human")
    a.claim(["CLAUDE.md"], strict=True)
    with pytest.raises(Refused):
        check_write(b.workspace, "CLAUDE.md", "inventory-service/build", None)
    meetings.open_meeting(b.workspace, [A], ["CLAUDE.md"])
    m = meetings.resolve(human.workspace, 1, 1, how=How("join"))
    assert m.joint == ("c1",)
    assert check_write(b.workspace, "CLAUDE.md", "inventory-service/build", "c1") == ()
    with pytest.raises(Refused):
        check_write(agents("third").workspace, "CLAUDE.md", "inventory-service/build", None)


def test_a_third_agents_claim_stops_a_grant_before_anything_changes(agents: Agents) -> None:
    a, b, c = agents(A), agents(B), agents("third")
    a.claim(["docs/a.md"])
    c.claim(["docs/b.md"])
    meetings.open_meeting(b.workspace, [A], ["docs/"])
    with pytest.raises(Invalid, match="third holds"):
        meetings.resolve(agents("human").workspace, 1, 1, how=How("handoff", who=B))
    assert meetings.show(a.workspace, 1).state == "open"
    assert held(a) == {A: ("docs/a.md",), "third": ("docs/b.md",)}


def test_past_its_deadline_a_meeting_escalates_when_next_read(
    agents: Agents, clock: FakeClock, sample: Path
) -> None:
    (sample / ".github").mkdir()
    (sample / ".github" / "CODEOWNERS").write_text("* @org/all\n/docs/ @org/docs\n")
    a, b = agents(A), agents(B)
    meetings.open_meeting(a.workspace, [B], ["docs/"], deadline_s=60)
    clock.advance(59)
    assert meetings.listing(b.workspace)[0].state == "open"
    clock.advance(1)
    (m,) = meetings.listing(b.workspace)
    assert (m.state, m.rev, m.owners) == ("escalated", 2, ("@org/docs",))
    escalations = [e for e in a.events() if e.type == "meeting.escalated"]
    assert [(e.actor, e.data["reason"]) for e in escalations] == [("memkeeper", "deadline")]
    assert "goes to a human (its deadline passed): @org/docs" in b.mail.inbox()[-1].text
    assert meetings.settle(a.workspace) == []  # once


def test_unknown_meetings_and_bad_plans_are_refused(agents: Agents) -> None:
    a = agents(A)
    with pytest.raises(Invalid, match="there is no meeting 7"):
        meetings.show(a.workspace, 7)
    meetings.open_meeting(a.workspace, [B], ["docs/"])
    with pytest.raises(Invalid, match="not within the contested"):
        meetings.propose(a.workspace, 1, 1, How("split", {A: ["src/"]}))
    with pytest.raises(Invalid, match="one of --proposal N"):
        meetings.resolve(a.workspace, 1, 1)
    assert meetings.show(a.workspace, 1).rev == 1


def test_the_deadline_defaults_to_the_policys(agents: Agents, sample: Path) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "meetings:\n  deadline: 45\n")
    m = meetings.open_meeting(agents(A).workspace, [B], ["docs/"], reason="why")
    assert (m.deadline - m.opened_at, m.reason) == (45, "why")


def test_opening_one_drops_resolved_meetings_past_the_policys_bound(
    agents: Agents, sample: Path, clock: FakeClock
) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "meetings:\n  keep_days: 1\n  keep: 2\n")
    a, human = agents(A), agents("human")
    for n in range(1, 5):
        meetings.open_meeting(a.workspace, [B], [f"docs/{n}.md"])
        if n != 2:  # 2 stays open: never dropped
            meetings.resolve(human.workspace, n, 1, how=How("escalate"))
            meetings.resolve(human.workspace, n, 2, how=How("handoff", who=B))
    assert [m.id for m in a.meetings.list(resolved=True)] == [1, 2, 3, 4]
    meetings.open_meeting(a.workspace, [B], ["docs/5.md"])  # beyond the newest 2: 1 goes
    assert [m.id for m in a.meetings.list(resolved=True)] == [2, 3, 4, 5]
    clock.advance(86_400 + 1)
    meetings.open_meeting(a.workspace, [B], ["docs/6.md"])  # a day on: 3 and 4 go too
    assert [m.id for m in a.meetings.list(resolved=True)] == [2, 5, 6]
