"""Mail as the issue asks it (issue 25 item 2): a message's ``about`` names something there
is; a message to all is delivered and acknowledged once per recipient, never once for all;
its sender is the identity acting, as its ``message.sent`` event says; and a takeover hands
the taker its predecessor's words — the abandon's reason and message — as a ``handoff``
message its channel delivers once."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper.errors import Invalid
from memkeeper.ops import mail

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock
    from tests.ops.conftest import Agents

ME, THEM, THIRD = "claude-code:s1", "codex:t2", "codex:t3"


def test_about_names_a_claim_a_section_a_file_or_a_work_item(agents: Agents) -> None:
    them = agents(THEM)
    claim = them.claim("src/api/", ttl=60)
    for about in (claim.id, "CLAUDE.md#build", "CLAUDE.md", "work:17"):
        assert mail.send(them.workspace, ME, "see", about=about).about == about
    before = len(them.events())
    for about, says in (
        ("c999", "no claim, file or section"),
        ("nothing.md#x", "no claim, file or section"),
        ("CLAUDE.md#no-such-section", "no-such-section"),
        ("work:", "no claim, file or section"),
    ):
        with pytest.raises(Invalid, match=says):
            mail.send(them.workspace, ME, "see", about=about)
    assert len(them.events()) == before


def test_a_message_to_all_is_acknowledged_once_by_each_recipient(agents: Agents) -> None:
    human, me, them = agents("human"), agents(ME), agents(THEM)
    sent = mail.send(human.workspace, "all", "freeze at five")
    mail.ack(me.workspace, sent.id)
    assert mail.inbox(me.workspace) == []
    assert [m.id for m in mail.inbox(them.workspace)] == [sent.id]  # not acked for them
    again = mail.ack(me.workspace, sent.id)
    assert again.acked_at is not None
    mail.ack(them.workspace, sent.id)
    acks = [(e.actor, e.data) for e in human.events() if e.type == "message.acked"]
    assert acks == [(ME, {"message": sent.id}), (THEM, {"message": sent.id})]
    with pytest.raises(Invalid, match="there is no message"):  # its sender receives none
        mail.ack(human.workspace, sent.id)


def test_the_sender_is_the_identity_acting_and_its_event_says_so(agents: Agents) -> None:
    them = agents(THEM)
    sent = them.mail.send(ME, "from me")
    assert sent.sender == THEM
    event = next(e for e in them.events() if e.type == "message.sent")
    assert (event.actor, event.data["message"]) == (THEM, sent.id)


def test_a_takeover_hands_the_taker_its_predecessors_words_once(
    agents: Agents, clock: FakeClock
) -> None:
    a, b = agents(THEM), agents(ME)
    claim = a.claim("src/api/", ttl=30)
    a.claims.abandon(claim.id, "blocked on the schema", message="start from the migration")
    assert b.mail.inbox() == []  # nobody has taken it yet
    clock.advance(61)
    new, _ = b.claims.takeover(claim.id)
    [got] = b.mail.inbox()
    assert (got.kind, got.sender, got.to, got.about) == ("handoff", THEM, ME, new.id)
    assert "blocked on the schema" in got.text
    assert "start from the migration" in got.text
    assert claim.id in got.text
    told, _ = b.mail.deliver("hook:claude-code")
    assert [m.id for m in told] == [got.id]
    assert b.mail.deliver("hook:claude-code") == ([], [])
    event = next(e for e in b.events() if e.type == "message.sent")
    assert (event.actor, event.data["words_of"], event.data["claim"]) == (ME, THEM, claim.id)


def test_an_expired_claims_taker_is_told_where_the_work_stood(
    agents: Agents, clock: FakeClock
) -> None:
    a, b = agents(THEM), agents(ME)
    claim = a.claim("src/api/", ttl=30)
    clock.advance(31)
    assert [r.state for r in b.claims.records()] == ["expired"]  # the sweep ends it now
    clock.advance(61)
    new, _ = b.claims.takeover(claim.id)
    [got] = b.mail.inbox()
    assert got.kind == "handoff"
    assert "let it expire" in got.text
    assert new.id in got.text


def test_hand_over_is_a_handoff_message_from_the_identity_acting(agents: Agents) -> None:
    them, me = agents(THEM), agents(ME)
    sent = them.mail.hand_over(ME, "work:3", "the parser is half done; tests in test_x")
    assert (sent.kind, sent.sender, sent.about) == ("handoff", THEM, "work:3")
    [line] = [m for m in me.mail.deliver()[0]]
    assert line.id == sent.id


def test_an_abandon_message_too_long_is_refused_and_changes_nothing(agents: Agents) -> None:
    a = agents(THEM)
    claim = a.claim("src/api/", ttl=30)
    with pytest.raises(Invalid, match="--message"):
        a.claims.abandon(claim.id, "why", message="x" * (16 * 1024 + 1))
    assert a.claims.record(claim.id).state == "active"


def test_ack_many_acknowledges_several_at_once_or_none(agents: Agents) -> None:
    human, me = agents("human"), agents(ME)
    ids = [mail.send(human.workspace, ME, f"m{n}").id for n in range(30)]
    other = mail.send(human.workspace, THEM, "not mine").id
    with pytest.raises(Invalid, match=f"there is no message {other} for {ME}"):
        mail.ack_many(me.workspace, [*ids, other])
    assert len(mail.inbox(me.workspace)) == 30  # none acknowledged
    done = mail.ack_many(me.workspace, [*ids, ids[0]])  # one twice: acknowledged once
    assert [m.id for m in done] == ids
    assert all(m.acked_at is not None for m in done)
    assert mail.inbox(me.workspace) == []
    acked = [e.data["message"] for e in me.events() if e.type == "message.acked"]
    assert acked == ids
    again = mail.ack_many(me.workspace, ids[:2])  # acknowledged before: as they were
    assert [m.acked_at for m in again] == [m.acked_at for m in done[:2]]


def test_a_meetings_handoff_gives_the_taker_a_handoff_message_with_the_note_once(
    agents: Agents,
) -> None:
    from memkeeper.ops import meetings
    from memkeeper.ops.meetings import How

    a, b = agents(ME), agents(THEM)
    a.claim(["docs/"], strict=True)
    meetings.open_meeting(b.workspace, [ME], ["docs/"])
    plan = How("handoff", who=THEM, note="the index is rebuilt; only the intro is left")
    meetings.propose(a.workspace, 1, 1, plan)
    meetings.accept(b.workspace, 1, 2, 1)
    meetings.resolve(a.workspace, 1, 3, proposal=1)
    assert [c.agent for c in b.claims()] == [THEM]
    [handed] = [m for m in b.mail.inbox() if m.kind == "handoff"]
    assert (handed.sender, handed.about) == (ME, "meeting 1")
    assert "only the intro is left" in handed.text
    resolved = [m for m in b.mail.inbox() if "resolved meeting" in m.text]
    assert resolved == [handed]  # told once: as its handoff, not a meeting notice too
    told, _ = b.mail.deliver("hook:codex")
    assert handed.id in [m.id for m in told]


def test_hand_over_names_something_there_is(agents: Agents) -> None:
    them = agents(THEM)
    with pytest.raises(Invalid, match="no claim, file or section"):
        them.mail.hand_over(ME, "c404", "yours now")
    assert agents(ME).mail.inbox() == []
