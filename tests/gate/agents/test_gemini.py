"""The Gemini CLI adapter: its BeforeTool/AfterTool payloads read into the core's calls, and
the core's decisions as Gemini's ``{"decision": "deny", "reason": …}`` — ``{}`` on every
other path, with exit 0, since Gemini denies on some non-zero exits that print anything.

The payload shapes are those of docs/reference.md §7 "Gemini CLI" (after
google-gemini/gemini-cli ``packages/core/src/hooks/types.ts`` ``HookInput`` /
``BeforeToolInput``, the tool parameters of ``tools/definitions`` and ``tools/edit.ts``
@ 5411f113); the answers those of the same section and gemini-cli's
``docs/hooks/reference.md`` ("BeforeTool").
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memkeeper.gate import agents
from memkeeper.gate.agents import gemini
from memkeeper.gate.facts import Decision
from memkeeper.gate.payload import BadPayload, ToolCall

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.gate.agents.base import Phase

SESSION = "51124319-e155-440c-b950-09aeb2ea488f"
REPO = "/home/dev/repo"


def payload(tool: str, tool_input: object, event: str = "BeforeTool") -> dict[str, Any]:
    """A Gemini CLI tool event: the base fields and what BeforeTool adds."""
    return {
        "session_id": SESSION,
        "transcript_path": f"/home/dev/.gemini/tmp/3f2a/chats/session-{SESSION}.jsonl",
        "cwd": REPO,
        "hook_event_name": event,
        "timestamp": "2026-10-05T10:00:01.123Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }


def call(tool: str, event: str = "PreToolUse", **fields: Any) -> ToolCall:
    return ToolCall(event, tool, REPO, SESSION, **fields)


def calls(body: dict[str, Any]) -> tuple[ToolCall, ...]:
    return gemini.parse(body, None, "/proc-cwd").calls


# -- which payloads are Gemini's ------------------------------------------------------------------


def test_gemini_payloads_are_told_by_their_event_names() -> None:
    assert gemini.sniff(payload("write_file", {}))
    assert gemini.sniff(payload("write_file", {}, "AfterTool"))
    assert not gemini.sniff({**payload("write_file", {}), "hook_event_name": "PreToolUse"})
    assert not gemini.sniff({**payload("write_file", {}), "hook_event_name": "AfterAgent"})
    assert gemini.sniff({**payload("write_file", {}), "hook_event_name": "BeforeAgent"})
    assert agents.detect(payload("replace", {}), agents.adapter("claude-code")).name == "gemini"


def test_the_phase_and_the_session() -> None:
    body = payload("run_shell_command", {"command": "ls"}, "AfterTool")
    got = gemini.parse(body, None, "/")
    assert (got.phase, got.session) == ("post", SESSION)
    assert got.calls == (call("Bash", "PostToolUse", command="ls"),)
    assert gemini.parse(payload("run_shell_command", {"command": "ls"}), None, "/").phase == "pre"
    for other in ({**body, "hook_event_name": "SessionEnd"}, {}):
        assert gemini.parse(other, None, "/").phase == "other"
    named = {k: v for k, v in body.items() if k != "hook_event_name"}
    assert gemini.parse(named, "BeforeTool", "/").phase == "pre"  # an event on argv stands in


# -- the tools ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        (
            "write_file",
            {"file_path": f"{REPO}/CLAUDE.md", "content": "# Project memory\n"},
            call("Write", file_path=f"{REPO}/CLAUDE.md", content="# Project memory\n"),
        ),
        (
            "write_file",
            {"file_path": "memory/../CLAUDE.md", "content": ""},
            call("Write", file_path=f"{REPO}/CLAUDE.md", content=""),
        ),
        (
            "replace",
            {
                "file_path": "memory/decisions.md",
                "instruction": "Change the database decision to postgres",
                "old_string": "- 2026-09-01: use sqlite\n",
                "new_string": "- 2026-09-01: use postgres\n",
            },
            call(
                "Edit",
                file_path=f"{REPO}/memory/decisions.md",
                edits=(("- 2026-09-01: use sqlite\n", "- 2026-09-01: use postgres\n", False),),
            ),
        ),
        (
            "replace",
            {"file_path": "a.md", "old_string": "x", "new_string": "y", "allow_multiple": True},
            call("Edit", file_path=f"{REPO}/a.md", edits=(("x", "y", True),)),
        ),
        (
            "replace",
            {"file_path": "a.md", "old_string": "x", "new_string": "y", "expected_replacements": 3},
            call("Edit", file_path=f"{REPO}/a.md", edits=(("x", "y", True),)),
        ),
        (
            "replace",
            {"file_path": "new.md", "old_string": "", "new_string": "# New\n"},
            call("Edit", file_path=f"{REPO}/new.md", edits=(("", "# New\n", False),)),
        ),
        (
            "run_shell_command",
            {"command": "echo x >> memory/decisions.md", "description": "Append to the log"},
            call("Bash", command="echo x >> memory/decisions.md"),
        ),
        (
            "run_shell_command",
            {"command": "echo x >> decisions.md", "dir_path": "memory"},
            call("Bash", command="cd memory\necho x >> decisions.md"),
        ),
        (
            "run_shell_command",
            {"command": "ls", "directory": "my dir"},
            call("Bash", command="cd 'my dir'\nls"),
        ),
    ],
)
def test_each_tool_becomes_the_cores_call(tool: str, tool_input: Any, expected: ToolCall) -> None:
    assert calls(payload(tool, tool_input)) == (expected,)


@pytest.mark.parametrize(
    "tool", ["read_file", "glob", "google_web_search", "mcp_fs_write_file", "write_todos"]
)
def test_tools_the_gate_does_not_judge_give_no_calls(tool: str) -> None:
    assert calls(payload(tool, {"file_path": "CLAUDE.md", "content": "x"})) == ()


def test_the_cwd_falls_back_to_the_process_and_the_session_may_be_missing() -> None:
    body = payload("write_file", {"file_path": "CLAUDE.md", "content": "x"})
    del body["cwd"], body["session_id"]
    got = gemini.parse(body, None, "/elsewhere")
    assert got.session == ""
    assert got.calls[0].file_path == "/elsewhere/CLAUDE.md"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (payload("write_file", "CLAUDE.md"), "write_file: tool_input is not an object"),
        (payload("write_file", {"content": "x"}), "tool_input.file_path is missing"),
        (payload("write_file", {"file_path": "", "content": "x"}), "write_file: tool_input.file"),
        (payload("write_file", {"file_path": "a.md"}), "tool_input.content is missing"),
        (payload("replace", {"file_path": "a.md", "old_string": "x"}), "tool_input.new_string"),
        (payload("replace", {"file_path": 1, "old_string": "x"}), "tool_input.file_path is not"),
        (payload("run_shell_command", {}), "tool_input.command is missing"),
        (payload("run_shell_command", {"command": "ls", "dir_path": 1}), "tool_input.dir_path"),
        ({**payload("read_file", {}), "cwd": ["x"]}, "payload.cwd is not a string"),
    ],
)
def test_unreadable_input_is_a_bad_payload(body: dict[str, Any], says: str) -> None:
    with pytest.raises(BadPayload, match="^" + says):
        calls(body)


# -- answers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        (Decision(), {}),
        (Decision("allow", "WAIT: b", "WAIT: b"), {"systemMessage": "WAIT: b"}),
        (Decision("deny", "no"), {"decision": "deny", "reason": "no"}),
        (Decision("ask", "ok?", "ok?"), {"decision": "deny", "reason": gemini.ASK + "ok?"}),
        (Decision("deny", ""), {"decision": "deny", "reason": "memkeeper denied this call."}),
    ],
)
def test_decisions_are_rendered_as_gemini_reads_them(
    decision: Decision, expected: dict[str, str]
) -> None:
    answer = gemini.render(decision)
    assert (answer.stdout, answer.code) == (json.dumps(expected) + "\n", 0)


@pytest.mark.parametrize("phase", ["pre", "post", "other"])
def test_the_allow_is_an_empty_object_and_exit_0_on_every_path(phase: Phase) -> None:
    assert (gemini.allow(phase).stdout, gemini.allow(phase).code) == ("{}\n", 0)


# -- never exit non-zero, never leave stdout empty (Gemini would read stderr as the answer) -------


def run_hook(raw: bytes) -> tuple[int, str, str]:
    from memkeeper.gate.hook import run

    out, err = io.StringIO(), io.StringIO()
    code = run("gemini", None, None, io.BytesIO(raw), out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_failure_inside_the_decision_answers_the_allow(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from memkeeper.gate import decide, hook

    def boom(*args: object) -> NoReturn:
        raise RuntimeError("the core broke")

    (tmp_path / ".memkeeper.yaml").write_text(
        "version: 1\nfiles: [{path: x.md, class: append-only}]\n"
    )
    (tmp_path / "x.md").write_text("# Log\n")
    body = payload("write_file", {"file_path": str(tmp_path / "x.md"), "content": "x"})
    raw = json.dumps(body).encode()
    code, stdout, _ = run_hook(raw)  # unbroken, the write of history is denied
    assert (code, json.loads(stdout)["decision"]) == (0, "deny")
    monkeypatch.setattr(decide, "decide", boom)
    assert run_hook(raw) == (
        0,
        "{}\n",
        "memkeeper hook gemini: the gate failed (RuntimeError: the core broke); allowed\n",
    )
    monkeypatch.setattr(hook, "gather", boom)
    assert run_hook(raw)[:2] == (0, "{}\n")
    broken = gemini.ADAPTER._replace(render=boom)  # the adapter's own answer cannot fail it
    monkeypatch.setattr(gemini, "ADAPTER", broken)
    assert run_hook(raw)[:2] == (0, "{}\n")


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
KEYS = st.sampled_from(
    ["file_path", "content", "old_string", "new_string", "allow_multiple", "command", "dir_path"]
)
INPUTS = st.dictionaries(KEYS, JSONISH, max_size=4)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tool=st.sampled_from(["write_file", "replace", "run_shell_command", "read_file"]),
    tool_input=INPUTS | JSONISH,
    event=st.sampled_from(["BeforeTool", "AfterTool", "Notification"]),
)
def test_whatever_the_payload_the_hook_exits_0_with_an_empty_object(
    tmp_path: Path, tool: str, tool_input: object, event: str
) -> None:
    body = {**payload(tool, tool_input, event), "cwd": str(tmp_path)}  # in no memory root
    code, stdout, _ = run_hook(json.dumps(body).encode())
    assert (code, stdout) == (0, "{}\n")


@pytest.mark.parametrize(("event", "phase"), [("SessionStart", "start"), ("BeforeAgent", "prompt")])
def test_geminis_session_start_and_prompt_are_the_channels_phases(event: str, phase: str) -> None:
    # packages/core/src/hooks/types.ts: HookInput (session_id, transcript_path, cwd,
    # hook_event_name, timestamp) with SessionStartInput.source / BeforeAgentInput.prompt
    body = {
        "session_id": "51124319-e155-440c-b950-09aeb2ea488f",
        "transcript_path": "",
        "cwd": "/home/dev/repo",
        "hook_event_name": event,
        "timestamp": "2026-10-05T10:00:03.789Z",
        "source": "startup",
        "prompt": "go on",
    }
    assert gemini.sniff(body)
    got = gemini.parse(body, None, "/proc")
    assert (got.phase, got.calls, got.cwd) == (phase, (), "/home/dev/repo")
    assert gemini.ADAPTER.tell is not None
    said = json.loads(gemini.ADAPTER.tell(phase, "for you").stdout)  # type: ignore[arg-type]
    assert said == {"hookSpecificOutput": {"hookEventName": event, "additionalContext": "for you"}}
    post = json.loads(gemini.ADAPTER.tell("post", "later").stdout)
    assert post["hookSpecificOutput"]["hookEventName"] == "AfterTool"
