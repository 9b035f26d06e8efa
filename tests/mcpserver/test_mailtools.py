"""``memory_send`` as a plain function: the CLI's JSON, sent as the caller's identity (there
is no argument to name another), its ``about`` checked; and ``memory_inbox`` acknowledges."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memkeeper import Memory
from memkeeper.mcpserver import mailtools, tools

if TYPE_CHECKING:
    from pathlib import Path

A, B = "claude-code:s1", "codex:t2"


def test_send_then_inbox_and_ack_through_the_tools(sample: Path) -> None:
    a, b = Memory.open(sample, A), Memory.open(sample, B)
    try:
        sent = send_to_b(a)
        assert (sent["sender"], sent["to"], sent["about"]) == (A, B, "CLAUDE.md#build")
        listed = tools.inbox(b, [])
        assert [m["id"] for m in listed["messages"]] == [sent["id"]]
        assert tools.inbox(b, [sent["id"]])["messages"] == []
        refused = tools.answer(lambda: mailtools.send(a, B, "x", "c404"))
        assert refused["status"] == "invalid"
    finally:
        a.close()
        b.close()


def send_to_b(memory: Memory) -> dict[str, Any]:
    answer = mailtools.send(memory, B, "the build moved", "CLAUDE.md#build")
    message: dict[str, Any] = answer["message"]
    return message
