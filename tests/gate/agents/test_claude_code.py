"""The Claude Code adapter: which payloads are Claude Code's (its tool events, with none of
the keys only other agents send), its calls as the core reads them (``PowerShell`` as a
shell command, ``NotebookEdit`` passed on with its input unread), the phase and the session,
and its answers: nothing for a silent allow, else one line of ``hookSpecificOutput`` JSON,
always exit 0.

The payload shapes are Claude Code's documented example inputs (``agent_id`` inside a
sub-agent), the answers those of docs/reference.md §7.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.gate import agents
from memkeeper.gate.agents import claude_code
from memkeeper.gate.agents.base import Answer
from memkeeper.gate.agents.claude_code import hook_output
from memkeeper.gate.decide import ALLOW
from memkeeper.gate.facts import Decision
from memkeeper.gate.payload import BadPayload, ToolCall

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.gate.agents.base import Phase

SESSION = "abc123"
REPO = "/home/dev/repo"


def payload(
    tool: str, tool_input: object, event: str = "PreToolUse", **extra: Any
) -> dict[str, Any]:
    """A Claude Code tool event: the common fields and what PreToolUse adds."""
    return {
        "session_id": SESSION,
        "prompt_id": "550e8400-e29b-41d4-a716-446655440000",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-repo/00893aaf.jsonl",
        "cwd": REPO,
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABC123",
        **extra,
    }


WRITE = {"file_path": f"{REPO}/CLAUDE.md", "content": "# Project memory\n"}


def call(tool: str, event: str = "PreToolUse", cwd: str = REPO, **fields: Any) -> ToolCall:
    return ToolCall(event, tool, cwd, SESSION, "toolu_01ABC123", **fields)


# -- which payloads are Claude Code's --------------------------------------------------------------


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse"])
def test_claude_codes_tool_events_are_its_own_whatever_else_they_carry(event: str) -> None:
    assert claude_code.sniff(payload("Write", WRITE, event))
    inside_a_sub_agent = payload("Bash", {"command": "ls"}, event, agent_id="a7", agent_type="x")
    assert claude_code.sniff(inside_a_sub_agent)
    assert claude_code.sniff({"hook_event_name": event})  # the event alone is enough


@pytest.mark.parametrize(
    "key",
    [
        "cursor_version",
        "workspace_roots",
        "conversation_id",
        "generation_id",  # Cursor
        "turn_id",  # Codex
        "toolName",
        "timestamp",  # Copilot
        "hookName",  # Cline
    ],
)
def test_a_payload_with_a_key_only_another_agent_sends_is_not_claude_codes(key: str) -> None:
    assert not claude_code.sniff(payload("Write", WRITE, **{key: "x"}))


@pytest.mark.parametrize("event", ["BeforeTool", "preToolUse", None, 3])
def test_other_events_are_not_claude_codes_tool_calls(event: object) -> None:
    body = payload("Write", WRITE)
    body["hook_event_name"] = event
    assert not claude_code.sniff(body)
    del body["hook_event_name"]
    assert not claude_code.sniff(body)


@pytest.mark.parametrize("named", [a for a in agents.AGENTS if a != claude_code.NAME])
def test_a_claude_code_payload_reaching_another_agents_hook_is_read_as_claude_codes(
    named: str,
) -> None:
    found = agents.detect(payload("Write", WRITE), agents.adapter(named))
    assert found is claude_code.ADAPTER
    assert found.name == "claude-code"


# -- its calls -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "phase"),
    [("PreToolUse", "pre"), ("PostToolUse", "post"), ("PostToolUseFailure", "failed")],
)
def test_a_tool_event_is_one_call_in_its_phase(event: str, phase: str) -> None:
    body = payload("Write", WRITE, event)
    assert claude_code.sniff(body)
    got = claude_code.parse(body, None, "/proc")
    assert got.phase == phase
    # after a failed call as after any: what it may have written is indexed
    assert got.calls == (
        call("Write", event, file_path=WRITE["file_path"], content=WRITE["content"]),
    )


@pytest.mark.parametrize("event", ["Stop", "Notification"])
def test_another_event_is_no_call_in_the_other_phase(event: str) -> None:
    got = claude_code.parse({"hook_event_name": event, "session_id": SESSION}, None, "/proc")
    assert (got.phase, got.calls) == ("other", ())


@pytest.mark.parametrize(
    ("event", "phase"), [("SessionStart", "start"), ("UserPromptSubmit", "prompt")]
)
def test_a_session_start_or_a_prompt_is_the_channels_phase(event: str, phase: str) -> None:
    body = {"hook_event_name": event, "session_id": SESSION, "cwd": "/repo", "source": "startup"}
    assert claude_code.sniff(body)
    got = claude_code.parse(body, None, "/proc")
    assert (got.phase, got.calls, got.session, got.cwd) == (phase, (), SESSION, "/repo")
    assert claude_code.parse({"hook_event_name": event}, None, "/proc").cwd == "/proc"


@pytest.mark.parametrize(
    ("phase", "event"),
    [
        ("start", "SessionStart"),
        ("prompt", "UserPromptSubmit"),
        ("post", "PostToolUse"),
        ("failed", "PostToolUseFailure"),  # Claude Code drops an answer naming another event
    ],
)
def test_what_the_channel_says_is_context_for_the_model_never_a_permission(
    phase: str, event: str
) -> None:
    said = "memkeeper — for you: …"
    assert claude_code.ADAPTER.tell is not None
    answer = claude_code.ADAPTER.tell(phase, said)  # type: ignore[arg-type]
    assert answer.code == 0
    assert json.loads(answer.stdout) == {
        "hookSpecificOutput": {"hookEventName": event, "additionalContext": said}
    }


def test_the_event_named_on_argv_does_not_override_the_payloads() -> None:
    got = claude_code.parse(payload("Write", WRITE), "PostToolUse", "/proc")
    assert got.phase == "pre"
    assert got.calls[0].event == "PreToolUse"


def test_powershell_is_judged_as_a_shell_command() -> None:
    command = "Set-Content memory/decisions.md 'x' > CLAUDE.md"
    got = claude_code.parse(payload("PowerShell", {"command": command}), None, "/proc")
    assert got.calls == (call("Bash", command=command),)


def test_notebook_edit_is_passed_on_with_its_input_unread() -> None:
    cell = {"notebook_path": f"{REPO}/CLAUDE.md", "new_source": "x", "edit_mode": "replace"}
    got = claude_code.parse(payload("NotebookEdit", cell), None, "/proc")
    assert got.calls == (call("NotebookEdit"),)


def test_a_relative_path_is_taken_from_the_payloads_cwd_else_the_process() -> None:
    relative = {"file_path": "memory/x.md", "old_string": "a", "new_string": "b"}
    inside = claude_code.parse(payload("Edit", relative), None, "/proc")
    assert inside.calls[0].file_path == f"{REPO}/memory/x.md"
    body = payload("Edit", relative)
    del body["cwd"]
    elsewhere = claude_code.parse(body, None, "/proc")
    assert (elsewhere.calls[0].cwd, elsewhere.calls[0].file_path) == ("/proc", "/proc/memory/x.md")


def test_the_session_is_the_session_id_a_sub_agent_included() -> None:
    """The agent is ``claude-code:<session_id>`` (reference §7): a sub-agent's calls are its
    session's, unlike Codex's and Cline's, which add ``/<agent_id>``."""
    sub = claude_code.parse(payload("Bash", {"command": "ls"}, agent_id="a7"), None, "/")
    assert sub.session == SESSION
    body = payload("Bash", {"command": "ls"})
    del body["session_id"]
    assert claude_code.parse(body, None, "/").session == ""


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"tool_name": "Write"}, "payload.hook_event_name is missing"),
        (payload("Write", None), "Write: tool_input is not an object"),
        (payload("PowerShell", {}), "tool_input.command is missing"),
        (payload("PowerShell", {"command": ["ls"]}), "tool_input.command is not a string"),
        ({**payload("Bash", {"command": "ls"}), "session_id": 7}, "payload.session_id is not"),
    ],
)
def test_an_unreadable_call_is_a_bad_payload(body: dict[str, Any], says: str) -> None:
    with pytest.raises(BadPayload, match="^" + says):
        claude_code.parse(body, None, "/proc")


# -- its answers -----------------------------------------------------------------------------------


def specific(**fields: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}) + "\n"


@pytest.mark.parametrize(
    ("decision", "stdout"),
    [
        (Decision(), ""),
        (
            Decision("deny", "no"),
            specific(permissionDecision="deny", permissionDecisionReason="no"),
        ),
        (
            Decision("ask", "ok?", "ok?"),
            specific(
                permissionDecision="ask", permissionDecisionReason="ok?", additionalContext="ok?"
            ),
        ),
        (Decision("allow", "WAIT: b", "WAIT: b"), specific(additionalContext="WAIT: b")),
    ],
    ids=["silent", "deny", "ask", "advisory"],
)
def test_a_decision_is_rendered_as_claude_code_reads_it(decision: Decision, stdout: str) -> None:
    assert claude_code.render(decision) == Answer(stdout, 0)


def test_a_reason_is_one_line_of_json_with_its_text_as_it_is() -> None:
    answer = claude_code.render(Decision("deny", "CLAUDE.md is section-owned —\nuse patch"))
    assert answer.stdout.count("\n") == 1
    assert "section-owned —\\nuse patch" in answer.stdout  # not \u2014


@given(
    verdict=st.sampled_from(["allow", "deny", "ask"]),
    reason=st.text(max_size=12),
    context=st.text(max_size=12),
)
def test_every_answer_is_nothing_or_one_pre_tool_use_object_and_exit_0(
    verdict: Any, reason: str, context: str
) -> None:
    answer = claude_code.render(Decision(verdict, reason, context))
    assert answer.code == 0
    if not answer.stdout:
        assert (verdict, reason) == ("allow", "")
        return
    assert answer.stdout.endswith("\n")
    assert answer.stdout.count("\n") == 1
    out = json.loads(answer.stdout)["hookSpecificOutput"]
    if verdict == "allow":  # a notice: context for the model, never a permission decision
        assert out == {"hookEventName": "PreToolUse", "additionalContext": context or reason}
        return
    assert (out["permissionDecision"], out["permissionDecisionReason"]) == (verdict, reason)
    assert out.get("additionalContext", "") == context


@pytest.mark.parametrize("phase", ["pre", "post", "other"])
def test_the_allow_prints_nothing_and_exits_0_on_every_path(phase: Phase) -> None:
    assert claude_code.allow(phase) == Answer("", 0)


# -- the answer's JSON ----------------------------------------------------------------------------


def test_a_notice_tells_claude_through_additional_context_and_decides_no_permission() -> None:
    # "allow" would skip Claude Code's permission prompt: a notice must not change that flow
    out = hook_output(Decision("allow", "WAIT: x", "WAIT: x"))
    assert out == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "WAIT: x"}
    }
    assert hook_output(Decision("allow", "WAIT: y")) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "WAIT: y"}
    }
    assert hook_output(ALLOW) is None


def test_a_denial_tells_claude_code_nothing_beyond_its_reason() -> None:
    out = hook_output(Decision("deny", "no"))
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        }
    }
