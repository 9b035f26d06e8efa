"""Release requests and answers as operations: one request per holder's claim until it is
answered; the holder answers by releasing (the requester is told, the claim is gone) or with
a reason and an ETA; an answer is given once; the dashboard's view pairs each request with
its answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper.errors import Invalid
from memkeeper.ops import releases

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock
    from tests.ops.conftest import Agents

ME, THEM = "claude-code:s1", "codex:t2"


def test_a_holder_is_asked_once_per_claim_until_it_answers(agents: Agents) -> None:
    me, them = agents(ME), agents(THEM)
    held = them.claim(["docs/"])
    (first,) = releases.ask(me.workspace, [held])
    assert (first.kind, first.to, first.about) == ("release-request", THEM, held.id)
    assert first.text == f"{ME} is waiting for docs/"
    assert releases.ask(me.workspace, [held]) == []
    assert releases.ask(them.workspace, [held]) == []  # never to oneself
    releases.answer(them.workspace, first.id, reason="soon")
    assert len(releases.ask(me.workspace, [held], "please")) == 1  # answered: ask again


def test_answering_with_release_gives_the_claim_back_and_tells_the_requester(
    agents: Agents,
) -> None:
    me, them = agents(ME), agents(THEM)
    held = them.claim(["docs/"])
    (asked,) = releases.ask(me.workspace, [held])
    told = releases.answer(them.workspace, asked.id, release=True)
    assert them.claims() == []
    assert (told.kind, told.to, told.about) == ("release-answer", ME, held.id)
    assert told.text == f"released claim {held.id}: claim its targets now"
    assert [m.id for m in me.mail.inbox()] == [told.id]
    assert them.mail.inbox() == []  # the request was acknowledged
    (event,) = [e for e in me.events() if e.type == "release.answered"]
    assert event.data == {
        "request": asked.id, "answer": told.id, "claim": held.id, "released": True,
        "reason": None, "eta_s": None,
    }  # fmt: skip
    with pytest.raises(Invalid, match="answered already"):
        releases.answer(them.workspace, asked.id, release=True)


def test_a_reason_and_an_eta_reach_the_requester(agents: Agents, clock: FakeClock) -> None:
    me, them = agents(ME), agents(THEM)
    (asked,) = releases.ask(me.workspace, [them.claim(["docs/"])])
    told = releases.answer(them.workspace, asked.id, reason="tests running", eta=90)
    assert told.text == (
        "keeps claim c1 for now: tests running — expected in 90 s (by 2023-11-14T22:14:50.000Z)"
    )
    assert len(them.claims()) == 1
    (row,) = releases.view(me.workspace)
    assert (row["from"], row["to"], row["claim"]) == (ME, THEM, "c1")
    assert row["answer"]["released"] is False
    assert row["answer"]["eta_s"] == 90


def test_bad_answers_change_nothing(agents: Agents) -> None:
    me, them = agents(ME), agents(THEM)
    (asked,) = releases.ask(me.workspace, [them.claim(["docs/"])])
    before = len(me.events())
    with pytest.raises(Invalid, match=f"no release request {asked.id} for {ME}"):
        releases.answer(me.workspace, asked.id, release=True)
    with pytest.raises(Invalid, match="one of the two"):
        releases.answer(them.workspace, asked.id)
    with pytest.raises(Invalid, match="--eta is seconds"):
        releases.answer(them.workspace, asked.id, reason="x", eta=-1)
    with pytest.raises(Invalid, match="empty"):
        releases.answer(them.workspace, asked.id, reason=" ")
    assert len(me.events()) == before
    assert len(them.claims()) == 1
