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
        posting.overlaps(ws, request, [mine, theirs])
    (told,) = mail.inbox(agents(THEM).workspace)
    assert (told.kind, told.sender, told.about) == ("overlap", ME, "c9")
    assert theirs.id in told.text
    assert mail.inbox(ws) == []
