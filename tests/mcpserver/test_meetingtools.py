"""The meetings' MCP tools as plain functions: the CLI's JSON, a stale rev as a ``conflict``
result with the meeting as it is now, and a release request answered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper import Memory
from memkeeper.mcpserver import meetingtools as mt
from memkeeper.mcpserver import tools

if TYPE_CHECKING:
    from pathlib import Path

A, B = "claude-code:s1", "codex:t2"


def test_a_meeting_through_the_tools(sample: Path) -> None:
    a, b = Memory.open(sample, A), Memory.open(sample, B)
    try:
        a.claim(["docs/"])
        opened = tools.answer(lambda: mt.open_meeting(b, [A], ["docs/"], 60, "mine too"))
        assert opened["status"] == "ok"
        assert opened["meeting"]["participants"] == [B, A]
        proposed = mt.propose(b, 1, 1, "split", {A: ["docs/a.md"], B: ["docs/b.md"]}, None, "")
        assert proposed["meeting"]["proposals"][0]["assign"] == {A: ["docs/a.md"], B: ["docs/b.md"]}
        stale = tools.answer(lambda: mt.accept(a, 1, 1, 1))
        assert (stale["status"], stale["current"]["rev"]) == ("conflict", 2)
        assert mt.accept(a, 1, 2, 1)["meeting"]["rev"] == 3
        done = mt.resolve(a, 1, 3, 1, None, None, None, "")
        assert done["meeting"]["state"] == "resolved"
        assert mt.meetings(a, None, False) == {"meetings": []}
        assert mt.meetings(a, 1, False)["meeting"]["rev"] == 4
        assert [c.targets for c in a.claims()] == [("docs/a.md",), ("docs/b.md",)]
        asked = b.mail.request_release(a.claims()[0].id)
        answered = mt.answer(a, asked.id, False, "still writing", 30)
        assert answered["message"]["kind"] == "release-answer"
    finally:
        a.close()
        b.close()
