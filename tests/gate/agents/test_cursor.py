"""The Cursor adapter: its hook payloads (``preToolUse``, ``beforeShellExecution``,
``postToolUse``, ``afterFileEdit``…, with ``hook_event_name``) read into the core's calls, and
the core's decisions as Cursor's permission JSON — always JSON, always exit 0.

The shapes are those of docs/reference.md §7 "Cursor": the common keys and the events'
inputs from cursor.com/docs/hooks (mirror mehmetbaykar/cursor-docs-skill
``skills/cursor-docs/references/hooks.md`` @ 1cc1c993); ``session_id``, ``cwd`` and
``Shell {command, cwd, timeout}`` from a cursor-agent 2026.10.01 capture (forgeprint/forgelore
``testdata/agents/cursor/2026.10.01/postToolUse-1.json`` @ b186dcaf); the ``Write`` argument
names, which no source documents, from Cygnux-Labs/Tracekit ``tests/data/harness/cursor.json``
@ 083c6ed8 (``path``/``contents``) and its v1.4.2 notes (``file_path``/``content``); a missing
``tool_name`` from deftai/directive#2628; a BOM and an empty ``cwd`` from
DobermanCore/Doberman-Core#576.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from memkeeper.gate import agents
from memkeeper.gate.agents import cursor
from memkeeper.gate.facts import Decision
from memkeeper.gate.payload import BadPayload, ToolCall

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.gate.agents.base import Phase

SESSION = "fc749b53-5672-41fa-87c7-c579c337199d"
REPO = "/home/dev/repo"


def common(event: str, **fields: Any) -> dict[str, Any]:
    """Cursor's common fields (docs "Common schema"), then the event's own."""
    return {
        "conversation_id": SESSION,
        "generation_id": "0b1e2c3d-0000-4000-8000-000000000001",
        "model": "default",
        "hook_event_name": event,
        "cursor_version": "2026.10.01-e373342",
        "workspace_roots": [REPO],
        "user_email": "dev@example.com",
        "transcript_path": None,
        "session_id": SESSION,
        "cwd": REPO,
        **fields,
    }


def tool(name: str | None, args: object, event: str = "preToolUse") -> dict[str, Any]:
    body = common(event, tool_input=args, tool_use_id="73da88f4-bc52-4b85-bdbe-34de8fa9c3e8")
    if name is not None:
        body["tool_name"] = name
    return body


def calls(payload: dict[str, Any], event: str | None = None) -> tuple[ToolCall, ...]:
    return cursor.parse(payload, event, "/elsewhere").calls


def pre(tool: str, cwd: str = REPO, **fields: Any) -> ToolCall:
    use_id = "73da88f4-bc52-4b85-bdbe-34de8fa9c3e8"
    return ToolCall("PreToolUse", tool, cwd, SESSION, use_id, **fields)


# -- which payloads are Cursor's -----------------------------------------------------------------

CLAUDE = {
    "session_id": "abc123",
    "transcript_path": "/home/dev/.claude/projects/x.jsonl",
    "cwd": REPO,
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Write",
    "tool_input": {"file_path": f"{REPO}/CLAUDE.md", "content": "x"},
}
COPILOT = {
    "sessionId": "2c5b",
    "timestamp": 1791176774359,
    "cwd": REPO,
    "toolName": "bash",
    "toolArgs": {"command": "ls"},
}


def test_cursor_payloads_are_told_by_their_keys_or_event_names() -> None:
    assert cursor.sniff(tool("Write", {"path": "x", "contents": "y"}))
    assert cursor.sniff({"hook_event_name": "afterFileEdit", "file_path": "/x", "edits": []})
    assert cursor.sniff({"hook_event_name": "beforeShellExecution", "command": "ls"})
    only_roots = {"workspace_roots": [REPO], "hook_event_name": "PreToolUse"}
    assert cursor.sniff(only_roots)  # a third-party (Claude-spelled) event still has them
    for other in (CLAUDE, COPILOT, {"hook_event_name": "BeforeTool"}):
        assert not cursor.sniff(other)


def test_claude_codes_hook_hands_cursor_payloads_to_the_cursor_adapter() -> None:
    claude = agents.adapter("claude-code")
    for payload in (
        tool("Write", {"path": "x", "contents": "y"}),
        {"hook_event_name": "beforeShellExecution", "command": "ls", "cwd": REPO},
        {"hook_event_name": "preToolUse", "tool_name": "Shell", "tool_input": {"command": "ls"}},
    ):
        assert not claude.sniff(payload)
        assert agents.detect(payload, claude).name == "cursor"
    assert agents.detect(CLAUDE, agents.adapter("cursor")).name == "claude-code"


# -- events ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "event", "phase"),
    [
        (tool("Shell", {"command": "ls"}), None, "pre"),
        (tool("Shell", {"command": "ls"}, "PreToolUse"), None, "pre"),
        (common("beforeShellExecution", command="ls", sandbox=False), None, "pre"),
        (tool("Shell", {"command": "ls"}, "postToolUse"), None, "post"),
        (common("afterFileEdit", file_path=f"{REPO}/x.md", edits=[]), None, "indexed"),
        (common("afterShellExecution", command="ls", output=""), None, "indexed"),
        (common("sessionStart"), None, "start"),
        (common("afterTabFileEdit", file_path=f"{REPO}/x.md", edits=[]), None, "other"),
        ({"tool_name": "Shell", "tool_input": {"command": "ls"}}, None, "pre"),
        ({"tool_name": "Shell", "tool_input": {"command": "ls"}}, "postToolUse", "post"),
        (
            {"tool_name": "Shell", "tool_input": {"command": "ls"}, "tool_output": "{}"},
            None,
            "post",
        ),
        ({"file_path": "/x.md", "edits": []}, None, "indexed"),
        ({"command": "ls"}, None, "pre"),
    ],
)
def test_the_event_comes_from_hook_event_name_else_argv_else_the_shape(
    payload: dict[str, Any], event: str | None, phase: str
) -> None:
    got = cursor.parse(payload, event, "/elsewhere")
    assert got.phase == phase
    assert len(got.calls) == (phase not in ("other", "start"))


def test_the_session_is_session_id_else_conversation_id() -> None:
    payload = tool("Shell", {"command": "ls"})
    assert cursor.parse(payload, None, "/").session == SESSION
    payload["session_id"] = "other"
    assert cursor.parse(payload, None, "/").session == "other"
    del payload["session_id"], payload["conversation_id"]
    assert cursor.parse(payload, None, "/").session == ""


# -- tools -----------------------------------------------------------------------------------------

WRITE = pre("Write", file_path=f"{REPO}/CLAUDE.md", content="# Project memory\n")
EDIT = pre(
    "Edit",
    file_path=f"{REPO}/memory/decisions.md",
    edits=(("- 2026-09-01: use sqlite\n", "- 2026-09-01: use postgres\n", False),),
)
OLD_NEW = {"old_string": "- 2026-09-01: use sqlite\n", "new_string": "- 2026-09-01: use postgres\n"}


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (tool("Write", {"file_path": f"{REPO}/CLAUDE.md", "content": "# Project memory\n"}), WRITE),
        (tool("Write", {"path": f"{REPO}/CLAUDE.md", "contents": "# Project memory\n"}), WRITE),
        (tool("Write", {"target_file": "CLAUDE.md", "text": "# Project memory\n"}), WRITE),
        (tool(None, {"path": "CLAUDE.md", "contents": "# Project memory\n"}), WRITE),
        (tool("Write", {"path": f"{REPO}/memory/decisions.md", **OLD_NEW}), EDIT),
        (tool("StrReplace", {"file_path": "memory/decisions.md", **OLD_NEW}), EDIT),
        (tool(None, {"path": "memory/decisions.md", **OLD_NEW}), EDIT),
        (tool("Write", json.dumps({"path": "CLAUDE.md", "contents": "# Project memory\n"})), WRITE),
        (
            tool("Write", {"path": "memory/decisions.md", "edits": [OLD_NEW]}),
            pre("MultiEdit", file_path=EDIT.file_path, edits=EDIT.edits),
        ),
        (
            tool("Delete", {"path": "memory/it's.md"}),
            pre("Bash", command=f"rm -- '{REPO}/memory/it'\"'\"'s.md'"),
        ),
        (
            tool("Shell", {"command": "echo x >> m.md", "cwd": REPO}),
            pre("Bash", command="echo x >> m.md"),
        ),
        (
            tool("Shell", {"command": "ls", "working_directory": "memory"}),
            pre("Bash", command="ls", cwd=f"{REPO}/memory"),
        ),
        (tool(None, {"command": "ls", "cwd": REPO, "timeout": 30000}), pre("Bash", command="ls")),
    ],
)
def test_each_tool_becomes_the_cores_call(payload: dict[str, Any], expected: ToolCall) -> None:
    assert calls(payload) == (expected,)


def test_before_shell_execution_is_a_shell_call() -> None:
    payload = common("beforeShellExecution", command="echo x >> m.md", cwd=REPO, sandbox=False)
    (call,) = calls(payload)
    assert (call.event, call.tool, call.cwd, call.command) == (
        "PreToolUse",
        "Bash",
        REPO,
        "echo x >> m.md",
    )


def test_after_file_edit_is_the_edited_file_after_the_tool() -> None:
    payload = common("afterFileEdit", file_path=f"{REPO}/memory/decisions.md", edits=[OLD_NEW])
    (call,) = calls(payload)
    assert (call.event, call.tool, call.file_path, call.edits) == (
        "PostToolUse",
        "Edit",
        EDIT.file_path,
        EDIT.edits,
    )


def test_an_empty_cwd_falls_back_to_the_first_workspace_root_then_the_process() -> None:
    payload = tool("Write", {"path": "CLAUDE.md", "contents": "x"})
    payload["cwd"] = ""
    payload["workspace_roots"] = ["/ws", "/other"]
    assert calls(payload)[0].file_path == "/ws/CLAUDE.md"
    del payload["workspace_roots"]
    assert calls(payload)[0].file_path == "/elsewhere/CLAUDE.md"


@pytest.mark.parametrize(
    "payload",
    [
        tool("Read", {"file_path": f"{REPO}/CLAUDE.md"}),
        tool("Grep", None),
        tool("MCP:memory_read", "not json"),
        tool("Task", {"prompt": "x"}),
        tool(None, {"query": "x"}),
    ],
)
def test_tools_the_gate_does_not_judge_give_no_calls(payload: dict[str, Any]) -> None:
    assert calls(payload) == ()


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        (tool("Write", None), "Write: tool_input is not an object"),
        (tool("Write", "not json"), "Write: tool_input is neither"),
        (tool("Write", {"contents": "x"}), "Write: no path"),
        (tool("Write", {"path": 1, "contents": "x"}), "Write: path is not a string"),
        (tool("Write", {"path": "x"}), "Write: neither a content"),
        (tool("Delete", {}), "Delete: no path"),
        (tool("Shell", {"command": ["ls"]}), "Shell: the command is missing"),
        (common("beforeShellExecution"), "Shell: the command is missing"),
        (common("afterFileEdit", edits=[]), "afterFileEdit: no file_path"),
        (common("afterFileEdit", file_path="/x", edits=["x"]), "afterFileEdit: an edit is not"),
    ],
)
def test_unreadable_inputs_are_a_bad_payload(payload: dict[str, Any], says: str) -> None:
    with pytest.raises(BadPayload, match="^" + says):
        calls(payload)


# -- answers: always JSON ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        (Decision(), {"permission": "allow"}),
        (
            Decision("allow", "WAIT: b", "WAIT: b"),
            {"permission": "allow", "agent_message": "WAIT: b"},
        ),
        (
            Decision("deny", "no"),
            {"permission": "deny", "user_message": "memkeeper: no", "agent_message": "no"},
        ),
        (
            Decision("ask", "ok?", "ok?"),
            {"permission": "ask", "user_message": "memkeeper: ok?", "agent_message": "ok?"},
        ),
    ],
)
def test_decisions_are_rendered_as_permission_json_with_exit_0(
    decision: Decision, expected: dict[str, str]
) -> None:
    answer = cursor.render(decision)
    assert (answer.stdout, answer.code) == (json.dumps(expected) + "\n", 0)


@pytest.mark.parametrize(
    ("phase", "stdout"),
    [
        ("pre", '{"permission": "allow"}\n'),
        ("other", '{"permission": "allow"}\n'),
        ("post", "{}\n"),
        ("indexed", "{}\n"),
    ],
)
def test_the_allow_is_always_json(phase: Phase, stdout: str) -> None:
    assert (cursor.allow(phase).stdout, cursor.allow(phase).code) == (stdout, 0)


def test_a_payload_with_a_bom_is_read() -> None:
    from memkeeper.gate.hook import run

    out, err = io.StringIO(), io.StringIO()
    body = b"\xef\xbb\xbf" + json.dumps(common("sessionStart")).encode()
    assert run("cursor", None, None, io.BytesIO(body), out, err) == 0
    assert (out.getvalue(), err.getvalue()) == ('{"permission": "allow"}\n', "")


def test_the_channel_reaches_cursor_after_a_tool_call_as_additional_context() -> None:
    assert cursor.ADAPTER.tell is not None
    said = json.loads(cursor.ADAPTER.tell("post", "for you").stdout)
    assert said == {"additional_context": "for you"}
    start = cursor.parse(common("sessionStart"), None, "/elsewhere")
    assert (start.phase, start.cwd) == ("start", REPO)  # (if a user hooks it: not installed)
