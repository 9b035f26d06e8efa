"""What an agent is told when its session starts."""

from __future__ import annotations

from memkeeper.claims.decisions import Claim
from memkeeper.coordination import Message
from memkeeper.mail.briefing import briefing

FILES = {
    "section-owned": ["AGENTS.md", "CLAUDE.md"],
    "append-only": ["memory/decisions.md"],
    "generated": ["memory/status.md"],
}
THEIRS = Claim(
    "c2", 1, "codex:t9", "write", ("memory/decisions.md",), 0, True, 0.0, 160.0, "log it"
)


def test_it_says_who_the_agent_is_and_how_each_class_is_changed() -> None:
    said = briefing("claude-code:s1", "memkeeper", False, FILES, [], 100.0, [], [])
    assert "You act here as claude-code:s1." in said
    assert "- section-owned: AGENTS.md, CLAUDE.md — change one section at a time" in said
    assert "memkeeper patch FILE#KEY --expect-rev REV --body-file -" in said
    assert "- append-only: memory/decisions.md — add entries at the end" in said
    assert "private" not in said  # no private file here: the class is not mentioned
    assert "MCP" not in said


def test_with_mcp_it_names_the_tools_and_the_program_as_the_shell_runs_it() -> None:
    said = briefing("codex:t1", "/opt/venv/bin/memkeeper", True, FILES, [], 100.0, [], [])
    assert "(MCP: memory_read, memory_patch)" in said
    assert "/opt/venv/bin/memkeeper append FILE" in said
    assert "memory_inbox" in said


def test_it_lists_others_claims_and_what_waits() -> None:
    waiting = [Message(3, "human", "claude-code:s1", "message", None, "look at the build", "t")]
    said = briefing("claude-code:s1", "memkeeper", False, FILES, [THEIRS], 100.0, waiting, [])
    assert (
        "- codex:t9 holds memory/decisions.md (write, strict, 60 s left, claim c2) — log it" in said
    )
    assert "- [3] message from human: look at the build" in said


def test_many_files_are_counted_not_listed() -> None:
    many = {"section-owned": [f"memory/n{n}.md" for n in range(30)]}
    said = briefing("a", "memkeeper", False, many, [], 0.0, [], [])
    assert "memory/n11.md and 18 more" in said
