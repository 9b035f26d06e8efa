"""Messages as operations on a workspace: sent and recorded, listed for their recipient,
acknowledged once, a release request to a claim's holder, and delivery — each thing once,
even when two hooks deliver at the same moment."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.clock import FakeClock
from memkeeper.errors import Invalid
from memkeeper.ops import mail
from tests.ops.conftest import START, edit

if TYPE_CHECKING:
    from pathlib import Path

    from tests.ops.conftest import Agents

ME, THEM = "claude-code:s1", "codex:t2"


def test_a_message_is_sent_recorded_listed_and_acknowledged(agents: Agents) -> None:
    human, me = agents("human"), agents(ME)
    sent = mail.send(human.workspace, ME, "the build moved", about="CLAUDE.md#build")
    assert (sent.sender, sent.to, sent.about) == ("human", ME, "CLAUDE.md#build")
    assert sent.kind == "message"
    assert [m.id for m in mail.inbox(me.workspace)] == [sent.id]
    assert mail.inbox(agents(THEM).workspace) == []
    done = mail.ack(me.workspace, sent.id)
    assert done.acked_at is not None
    assert mail.inbox(me.workspace) == []
    kinds = [(e.type, e.actor) for e in human.events() if e.type.startswith("message.")]
    assert kinds == [("message.sent", "human"), ("message.acked", ME)]


def test_only_its_recipient_acknowledges_a_message(agents: Agents) -> None:
    sent = mail.send(agents("human").workspace, ME, "for you")
    with pytest.raises(Invalid, match=f"there is no message {sent.id} for {THEM}"):
        mail.ack(agents(THEM).workspace, sent.id)
    with pytest.raises(Invalid, match="there is no message 99"):
        mail.ack(agents(ME).workspace, 99)


def test_bad_input_changes_nothing(agents: Agents) -> None:
    human = agents("human")
    before = len(human.events())
    for to, text in (("two words", "x"), (ME, " "), (ME, "\x00")):
        with pytest.raises(Invalid):
            mail.send(human.workspace, to, text)
    with pytest.raises(Invalid, match="unknown message kind"):
        mail.send(human.workspace, ME, "x", kind="gossip")
    assert len(human.events()) == before


def test_a_release_request_reaches_the_claims_holder(agents: Agents) -> None:
    me, them = agents(ME), agents(THEM)
    held = me.claim(["CLAUDE.md#build"], ttl=120)
    asked = mail.request_release(them.workspace, held.id)
    assert (asked.to, asked.kind, asked.about) == (ME, "release-request", held.id)
    assert asked.text == f"{THEM} is waiting for {', '.join(held.targets)}"
    with pytest.raises(Invalid, match="is your own"):
        mail.request_release(me.workspace, held.id)
    with pytest.raises(Invalid, match="there is no live claim nope"):
        mail.request_release(them.workspace, "nope")


def test_a_release_request_from_a_clock_a_minute_ahead_still_finds_the_live_claim(
    agents: Agents, sample: Path
) -> None:
    """Claims are judged by the claims' clock, not the asker's wall clock (issue 22 item 6):
    before, a process a minute ahead took a live claim of 30 s for an expired one."""
    held = agents(ME).claim("src/", ttl=30)
    ahead = FakeClock(START)
    ahead.set(START + 60)
    them = Memory.open(sample, agent=THEM, clock=ahead)
    try:
        assert mail.request_release(them.workspace, held.id).about == held.id
    finally:
        them.close()


def test_delivery_tells_each_message_once(agents: Agents) -> None:
    human, me = agents("human"), agents(ME)
    mail.send(human.workspace, ME, "one")
    mail.send(human.workspace, "all", "to all")
    told, notices = mail.deliver(me.workspace, "hook:claude-code")
    assert ([m.text for m in told], notices) == (["one", "to all"], [])
    assert mail.deliver(me.workspace, "hook:claude-code") == ([], [])
    assert [m.text for m in mail.inbox(me.workspace)] == ["one", "to all"]  # until acked
    delivered = [e for e in me.events() if e.type == "message.delivered"]
    assert [(e.actor, e.data) for e in delivered] == [
        (ME, {"messages": [1, 2], "via": "hook:claude-code"})
    ]


def test_a_claim_about_to_expire_is_told_once_per_expiry(agents: Agents, clock: FakeClock) -> None:
    me = agents(ME)
    held = me.claim(["memory/decisions.md"], ttl=100)
    assert mail.deliver(me.workspace, "hook") == ([], [])
    clock.advance(80)
    _, notices = mail.deliver(me.workspace, "hook")
    assert notices == [
        f"your claim {held.id} on memory/decisions.md expires in 20 s: renew it "
        f"(memkeeper renew {held.id}) or release it (memkeeper release {held.id})"
    ]
    assert mail.deliver(me.workspace, "hook") == ([], [])
    me.renew(held.id, ttl=100)
    clock.advance(80)
    assert len(mail.deliver(me.workspace, "hook")[1]) == 1  # a new expiry: told again


def test_two_deliveries_at_once_never_tell_one_message_twice(agents: Agents) -> None:
    human = agents("human")
    for n in range(20):
        mail.send(human.workspace, ME, f"m{n}")
    told: list[list[int]] = []
    start = threading.Barrier(4)

    def deliver() -> None:
        from memkeeper import Memory

        memory = Memory.open(human.root, agent=ME)
        try:
            start.wait()
            told.append([m.id for m in mail.deliver(memory.workspace, "hook")[0]])
        finally:
            memory.close()

    threads = [threading.Thread(target=deliver) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = sorted(i for ids in told for i in ids)
    assert every == list(range(1, 21))


def test_the_session_start_lists_the_classes_others_claims_and_delivers_what_waits(
    agents: Agents,
) -> None:
    me, them = agents(ME), agents(THEM)
    them.claim(["memory/decisions.md"], ttl=120, objective="log the release")
    mail.send(them.workspace, ME, "I am on the decision log")
    said = mail.start(me.workspace, "memkeeper", False, "hook:claude-code")
    assert f"You act here as {ME}." in said
    assert "- append-only: memory/decisions.md, memory/risks.md" in said
    assert f"- {THEM} holds memory/decisions.md" in said
    assert f"- [1] message from {THEM}: I am on the decision log" in said
    assert mail.deliver(me.workspace, "hook") == ([], [])  # the start delivered it


def test_a_section_read_then_changed_by_another_is_told_once(agents: Agents) -> None:
    me, them = agents(ME), agents(THEM)
    assert me.workspace.store is not None  # (a root without a store writes nothing down)
    read = me.read("CLAUDE.md#build")
    assert mail.deliver(me.workspace, "hook") == ([], [])  # nothing changed: nothing said
    them.patch("CLAUDE.md#build", "- b1\n", expect_rev=read.rev)
    them.patch("CLAUDE.md#build", "- b2\n", expect_rev=read.rev + 1)
    ref = "CLAUDE.md#inventory-service/build"  # the full key (§3)
    assert mail.deliver(me.workspace, "hook") == (
        [],
        [
            f"{ref} changed since you read it (rev {read.rev} → {read.rev + 2}) by {THEM}: "
            f"read it again before you change it (memkeeper read {ref})"
        ],
    )
    assert mail.deliver(me.workspace, "hook") == ([], [])
    assert mail.deliver(them.workspace, "hook") == ([], [])  # the writer read nothing


def test_a_change_of_ones_own_or_a_read_again_is_not_told(agents: Agents, sample: Path) -> None:
    me, them = agents(ME), agents(THEM)
    assert me.workspace.store is not None
    me.read("CLAUDE.md")  # the whole file: every section of it
    done = me.patch("CLAUDE.md#build", "- mine\n", expect_rev=me.read("CLAUDE.md#build").rev)
    them.patch("CLAUDE.md#testing", "- t\n", expect_rev=them.read("CLAUDE.md#testing").rev)
    me.read("CLAUDE.md#testing")
    assert mail.deliver(me.workspace, "hook") == ([], [])
    edit(sample, "CLAUDE.md", "- mine\n", "- a human's\n")
    them.read("CLAUDE.md#build")  # indexes the human's save (actor external)
    _, notices = mail.deliver(me.workspace, "hook")
    assert notices == [
        f"CLAUDE.md#inventory-service/build changed since you read it (rev {done.rev} → "
        f"{done.rev + 1}) by an edit outside memkeeper: read it again before you change it "
        "(memkeeper read CLAUDE.md#inventory-service/build)"
    ]


def test_reads_of_files_not_changed_by_section_are_not_written_down(agents: Agents) -> None:
    me = agents(ME)
    assert me.workspace.store is not None
    me.read("CLAUDE.md#build")
    me.read("memory/decisions.md")
    store = me.workspace.store
    rev = me.read("CLAUDE.md#build").rev
    assert store.reads_of(ME, "CLAUDE.md") == {"inventory-service/build": rev}
    assert store.reads_of(ME, "memory/decisions.md") == {}


def test_a_new_message_trims_those_given_a_week_ago_never_unread_ones(
    agents: Agents, clock: FakeClock
) -> None:
    human, me = agents("human"), agents(ME)
    mail.send(human.workspace, ME, "told")
    mail.send(human.workspace, THEM, "not yet told")
    mail.deliver(me.workspace, "hook")
    clock.advance(8 * 24 * 3600)
    mail.send(human.workspace, ME, "new")
    assert [m.text for m in mail.inbox(agents(THEM).workspace)] == ["not yet told"]
    assert [m.text for m in mail.inbox(me.workspace, acked=True)] == ["new"]
