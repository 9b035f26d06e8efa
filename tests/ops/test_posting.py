"""``ops.posting``: a message posted inside the caller's transaction is recorded as sent and
keeps the bound on kept messages; a queued request tells each other holder in its way once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.claims import decisions as rules
from memkeeper.ops import mail, posting

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock
    from tests.ops.conftest import Agents

ME, THEM = "claude-code:s1", "codex:t2"


def test_a_post_is_recorded_and_trims_what_was_given_a_week_ago(
    agents: Agents, clock: FakeClock
) -> None:
    human, me = agents("human"), agents(ME)
    ws = human.workspace
    with ws.store.writing():
        first = posting.post(ws, "human", ME, "message", None, "told")
    mail.deliver(me.workspace, "hook")
    clock.advance(8 * 24 * 3600)
    with ws.store.writing():
        later = posting.post(ws, "human", ME, "message", "c1", "new")
    assert later.id > first.id
    assert [m.text for m in mail.inbox(me.workspace, acked=True)] == ["new"]
    sent = [e for e in ws.store.events() if e.type == "message.sent"]
    assert [e.data["message"] for e in sent] == [first.id, later.id]
    assert sent[-1].data == {"message": later.id, "to": ME, "kind": "message", "about": "c1"}


def test_a_request_tells_each_other_holder_once_and_never_itself(agents: Agents) -> None:
    mine, theirs = agents(ME).claim("src/", strict=True), agents(THEM).claim("docs/")
    ws = agents(ME).workspace
    request = rules.make_request("c9", ME, ["src/", "docs/"], mode="write", ttl=5.0, arrival=1)
    with ws.store.writing():
        posting.overlaps(ws, request, [mine, theirs], {"c9"})
    (told,) = mail.inbox(agents(THEM).workspace)
    assert (told.kind, told.sender, told.about) == ("overlap", ME, "c9")
    assert theirs.id in told.text
    assert mail.inbox(ws) == []


def test_an_overlap_notice_is_withdrawn_once_its_request_waits_no_more(agents: Agents) -> None:
    """Queued behind the same holder again and again, a requester leaves it one notice (the
    one about the wait still on), not one per wait: untold notices of waits that ended are
    withdrawn at the next post, so they cannot pile up in a holder that never reads."""
    theirs = agents(THEM).claim("src/")
    ws = agents(ME).workspace
    for n in range(1, 6):
        request = rules.make_request(f"c{n}", ME, ["src/"], mode="write", ttl=5.0, arrival=n)
        with ws.store.writing():
            posting.overlaps(ws, request, [theirs], {f"c{n}"})
    kept = ws.store.mail.kept_messages()
    assert [(row[4], row[5]) for row in kept] == [("overlap", "c5")]
    assert [m.about for m in mail.inbox(agents(THEM).workspace)] == ["c5"]
    sent = [e.data["about"] for e in ws.store.events() if e.type == "message.sent"]
    assert sent == ["c1", "c2", "c3", "c4", "c5"]  # the log keeps what was said


def test_an_overlap_notice_given_or_still_waiting_is_kept(agents: Agents) -> None:
    theirs = agents(THEM).claim("src/")
    ws = agents(ME).workspace
    first = rules.make_request("c1", ME, ["src/"], mode="write", ttl=5.0, arrival=1)
    second = rules.make_request("c2", ME, ["src/"], mode="write", ttl=5.0, arrival=2)
    with ws.store.writing():
        posting.overlaps(ws, first, [theirs], {"c1"})
        posting.overlaps(ws, second, [theirs], {"c1", "c2"})  # both wait
    assert [m.about for m in mail.inbox(agents(THEM).workspace)] == ["c1", "c2"]
    mail.deliver(agents(THEM).workspace, "hook")  # given
    third = rules.make_request("c3", ME, ["src/"], mode="write", ttl=5.0, arrival=3)
    with ws.store.writing():
        posting.overlaps(ws, third, [theirs], {"c3"})
    told = mail.inbox(agents(THEM).workspace)
    assert [m.about for m in told] == ["c1", "c2", "c3"]  # given ones: the usual bound
