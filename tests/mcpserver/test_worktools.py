"""The work items' MCP tools as plain functions: the CLI's JSON, nothing to take as a
``busy`` result with its counts, and a late ``done`` refused as the CLI refuses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper import Memory
from memkeeper.mcpserver import tools
from memkeeper.mcpserver import worktools as wt

if TYPE_CHECKING:
    from pathlib import Path

A, B = "claude-code:s1", "codex:t2"


def test_a_work_item_through_the_tools(sample: Path) -> None:
    a, b = Memory.open(sample, A), Memory.open(sample, B)
    try:
        added = wt.add(a, "Fix the build", ["src/"], 2, [], "make it pass")
        assert added["item"]["paths"] == ["src/"]
        wt.add(a, "Then the docs", [], 0, [1], "")
        assert [i["id"] for i in wt.listing(a, None, True)["items"]] == [1]
        taken = wt.take(b, 60, None)
        assert (taken["item"]["agent"], taken["claim"]["objective"]) == (B, "Fix the build")
        busy = tools.answer(lambda: wt.take(a, None, None))
        assert (busy["status"], busy["reason"], busy["open"], busy["claimed"]) == (
            "busy", "queued", 1, 1,
        )  # fmt: skip
        refused = tools.answer(lambda: wt.done(a, 1, [], None))
        assert (refused["status"], refused["reason"]) == ("refused", "not_holder")
        assert wt.done(b, 1, [], taken["claim"]["id"])["item"]["state"] == "done"
        wt.take(a, None, None)
        assert wt.give_back(a, 2, None)["item"]["state"] == "open"
        wt.take(a, None, None)
        assert wt.fail(a, 2, "no docs tool", None)["item"]["reason"] == "no docs tool"
        assert wt.listing(a, 2, False)["item"]["state"] == "failed"
        wt.add(a, "After the docs", [], 0, [2], "")
        blocked = {"id": 2, "reason": "no docs tool", "through": None}
        assert wt.listing(b, 3, False)["item"]["blocked"] == [blocked]
        assert [i["blocked"] for i in wt.listing(b, None, False)["items"]] == [[], [], [blocked]]
        stale = tools.answer(lambda: wt.edit(b, 3, 9, {"title": "x"}))
        assert (stale["status"], stale["reason"], stale["current"]["rev"]) == (
            "conflict", "stale_revision", 1,
        )  # fmt: skip
        assert wt.edit(b, 3, 1, {"title": "x", "after": []})["item"]["after"] == []
        assert wt.retry(b, 2)["item"]["state"] == "open"
    finally:
        a.close()
        b.close()
