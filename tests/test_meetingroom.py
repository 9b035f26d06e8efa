"""``Memory.meetings``: the Python API's meetings, the same operations as the CLI's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper import Memory
from memkeeper.clock import FakeClock

if TYPE_CHECKING:
    from pathlib import Path

A, B = "claude-code:s1", "codex:t2"


def test_a_meeting_through_the_api(sample: Path) -> None:
    clock = FakeClock(1_700_000_000.0)
    a, b = Memory.open(sample, A, clock), Memory.open(sample, B, clock)
    try:
        held = a.claim(["docs/"])
        m = b.meetings.open([A], ["docs/"], deadline_s=60, reason="both")
        m = b.meetings.propose(m.id, m.rev, "handoff", who=B)
        m = a.meetings.accept(m.id, m.rev, 1)
        m = a.meetings.resolve(m.id, m.rev, proposal=1)
        assert m.state == "resolved"
        assert [(c.agent, c.targets) for c in a.claims()] == [(B, ("docs/",))]
        assert [x.id for x in a.meetings.list(resolved=True)] == [m.id]
        assert b.meetings.show(m.id) == m
        asked = a.mail.request_release(b.claims()[0].id)
        told = b.meetings.answer(asked.id, reason="mine now", eta=10)
        assert told.to == A
        assert held.id != b.claims()[0].id
    finally:
        a.close()
        b.close()
