"""The channel through Claude Code's hooks, in this process: the session start's context, a
message before the next prompt and after a tool call — each once, as additionalContext and
never a permission — and nothing at all outside a memory root or with nothing to say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memkeeper.gate import channel
from tests.conftest import run_main

SESSION = "7f3c2a10-1b2c-4d5e-8f90-123456789abc"
ME = f"claude-code:{SESSION}"


@pytest.fixture
def root(sample: Path) -> Path:
    assert run_main(sample, "init").code == 0
    return sample


def hook(root: Path, event: str, **extra: Any) -> dict[str, Any] | None:
    body = {"session_id": SESSION, "hook_event_name": event, "cwd": str(root), **extra}
    done = run_main(root, "hook", "claude-code", stdin=json.dumps(body))
    assert (done.code, done.stderr) == (0, "")
    return json.loads(done.stdout) if done.stdout else None


def context(answer: dict[str, Any] | None, event: str) -> str:
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert set(out) == {"hookEventName", "additionalContext"}  # never a permission
    assert out["hookEventName"] == event
    text: str = out["additionalContext"]
    return text


def test_the_session_start_tells_who_it_is_and_how_memory_is_edited(root: Path) -> None:
    said = context(hook(root, "SessionStart", source="startup"), "SessionStart")
    assert f"You act here as {ME}." in said
    assert "memkeeper patch FILE#KEY --expect-rev REV --body-file -" in said


def test_a_message_reaches_the_next_prompt_once(root: Path) -> None:
    assert hook(root, "UserPromptSubmit", prompt="go on") is None  # nothing to say
    assert run_main(root, "send", "--to", ME, "--text", "CLAUDE.md#build moved").code == 0
    said = context(hook(root, "UserPromptSubmit", prompt="go on"), "UserPromptSubmit")
    assert "- [1] message from human: CLAUDE.md#build moved" in said
    assert hook(root, "UserPromptSubmit", prompt="and on") is None


def test_a_release_request_reaches_the_session_after_its_next_tool_call(root: Path) -> None:
    took = run_main(root, "--agent", ME, "claim", "CLAUDE.md#build", "--json")
    claim_id = took.json["id"]
    assert run_main(root, "--agent", "codex:t2", "request-release", claim_id).code == 0
    bash = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}
    said = context(hook(root, "PostToolUse", **bash), "PostToolUse")
    assert f"codex:t2 asks you to release your claim about {claim_id}" in said


def test_a_tool_call_that_failed_delivers_too(root: Path) -> None:
    # a command's non-zero exit is PostToolUseFailure, not PostToolUse: a session whose
    # commands fail must hear of a release request all the same
    took = run_main(root, "--agent", ME, "claim", "CLAUDE.md#build", "--json")
    assert run_main(root, "--agent", "codex:t2", "request-release", took.json["id"]).code == 0
    failed = {"tool_name": "Bash", "tool_input": {"command": "false"}, "error": "Exit code 1"}
    said = context(hook(root, "PostToolUseFailure", **failed), "PostToolUseFailure")
    assert "codex:t2 asks you to release your claim" in said
    assert hook(root, "PostToolUseFailure", **failed) is None  # once


def test_nothing_is_said_or_made_outside_a_memory_root(tmp_path: Path) -> None:
    assert channel.said("start", str(tmp_path), None, ME, "claude-code") == ""
    assert not (tmp_path / ".memkeeper").exists()


def test_codex_is_told_the_same_at_its_session_start(root: Path) -> None:
    thread = "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b"
    assert run_main(root, "send", "--to", f"codex:{thread}", "--text", "hello codex").code == 0
    body = {
        "session_id": thread,
        "transcript_path": None,
        "cwd": str(root),
        "hook_event_name": "SessionStart",
        "model": "gpt-5.5",
        "permission_mode": "default",
        "source": "startup",
    }
    done = run_main(root, "hook", "codex", stdin=json.dumps(body))
    said = context(json.loads(done.stdout), "SessionStart")
    assert f"You act here as codex:{thread}." in said
    assert "- [1] message from human: hello codex" in said


def test_gemini_is_told_at_its_session_start_and_copilot_after_a_tool_call(root: Path) -> None:
    start = {
        "session_id": "g1",
        "transcript_path": "",
        "cwd": str(root),
        "hook_event_name": "SessionStart",
        "timestamp": "2026-10-05T10:00:03.789Z",
        "source": "startup",
    }
    done = run_main(root, "hook", "gemini", stdin=json.dumps(start))
    assert "You act here as gemini:g1." in context(json.loads(done.stdout), "SessionStart")
    assert run_main(root, "send", "--to", "copilot:s9", "--text", "for copilot").code == 0
    post = {
        "sessionId": "s9",
        "timestamp": 1760000000000,
        "cwd": str(root),
        "toolName": "bash",
        "toolArgs": json.dumps({"command": "ls"}),
        "toolResult": {"resultType": "success", "textResultForLlm": ""},
    }
    said = run_main(root, "hook", "copilot", "--event", "postToolUse", stdin=json.dumps(post))
    assert "- [1] message from human: for copilot" in json.loads(said.stdout)["additionalContext"]


def test_a_read_tools_file_is_written_down_and_its_change_by_another_told_once(
    root: Path,
) -> None:
    read = {"tool_name": "Read", "tool_input": {"file_path": str(root / "CLAUDE.md")}}
    assert hook(root, "PostToolUse", **read) is None  # nothing to say yet
    other = {"tool_name": "Read", "tool_input": {"file_path": str(root / "src" / "x.py")}}
    assert hook(root, "PostToolUse", **other) is None  # not a memory file: nothing written
    body = "- make all\n"
    done = run_main(root, "read", "CLAUDE.md#build", "--json")
    rev = json.loads(done.stdout)["rev"]
    patched = run_main(
        root,
        *("patch", "CLAUDE.md#build", "--expect-rev", str(rev), "--body-file", "-"),
        stdin=body,
        env={"MEMKEEPER_AGENT": "codex:xyz"},
    )
    assert patched.code == 0, patched.stderr
    told = context(hook(root, "UserPromptSubmit", prompt="go"), "UserPromptSubmit")
    assert f"(rev {rev} → {rev + 1}) by codex:xyz" in told
    assert "#inventory-service/build changed since you read it" in told
    assert hook(root, "UserPromptSubmit", prompt="go") is None
