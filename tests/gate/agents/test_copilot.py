"""The Copilot adapter: its payloads (camelCase with the event on argv, PascalCase with
``hook_event_name``) read into the core's calls, and the core's decisions in its flat
answer format — which is ``{}``, exit 0, on every path that is not a decision, since
Copilot denies a call whose hook crashes or exits non-zero.

The payload shapes are those of docs/reference.md §7 "GitHub Copilot" (github/docs
``content/copilot/reference/hooks-reference.md`` "preToolUse / PreToolUse" @ 05da5bc3; the
arguments from github/copilot-sdk ``test/snapshots/builtin_tools`` @ cc0438d6; ``toolArgs``
as a JSON string from pbakaus/impeccable ``hook-lib.mjs`` @ 56f44523 and
github/copilot-cli#3349; as an object for ``bash`` from forgeprint/forgelore
``testdata/agents/copilot-cli/1.0.91/postToolUse-1.json`` @ 4f418c6c).
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
from memkeeper.gate.agents import copilot
from memkeeper.gate.facts import Decision
from memkeeper.gate.payload import BadPayload, ToolCall

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.gate.agents.base import Phase

SESSION = "2c5b65f5-bb1d-4479-826e-c9cdacac321b"
REPO = "/home/dev/repo"


def camel(tool: str, args: object, **extra: Any) -> dict[str, Any]:
    """A camelCase preToolUse payload (hooks-reference.md "camelCase input")."""
    return {
        "sessionId": SESSION,
        "timestamp": 1791176774359,
        "cwd": REPO,
        "toolName": tool,
        "toolArgs": args,
        **extra,
    }


def pascal(tool: str, args: object, event: str = "PreToolUse") -> dict[str, Any]:
    """A PascalCase payload ("VS Code compatible input"), Claude's tool names."""
    return {
        "hook_event_name": event,
        "session_id": SESSION,
        "timestamp": "2026-10-05T10:00:01.123Z",
        "cwd": REPO,
        "tool_name": tool,
        "tool_input": args,
    }


def calls(payload: dict[str, Any], event: str | None = "preToolUse") -> tuple[ToolCall, ...]:
    return copilot.parse(payload, event, "/elsewhere").calls


def pre(tool: str, **fields: Any) -> ToolCall:
    return ToolCall("PreToolUse", tool, REPO, SESSION, **fields)


# -- which payloads are Copilot's ----------------------------------------------------------------

CLAUDE = {
    "session_id": "abc123",
    "transcript_path": "/home/dev/.claude/projects/x.jsonl",
    "cwd": REPO,
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Write",
    "tool_input": {"file_path": f"{REPO}/CLAUDE.md", "content": "x"},
}
CURSOR = {
    "conversation_id": "fc749b53",
    "generation_id": "0b1e2c3d",
    "hook_event_name": "preToolUse",
    "cursor_version": "2026.10.01-e373342",
    "workspace_roots": [REPO],
    "tool_name": "Write",
    "tool_input": {"file_path": f"{REPO}/CLAUDE.md", "content": "x"},
}
CLINE = {
    "clineVersion": "4.2.0",
    "hookName": "PreToolUse",
    "timestamp": "1791176774359",
    "preToolUse": {"toolName": "editor", "parameters": {"path": "CLAUDE.md", "new_text": "x"}},
}


def test_copilot_payloads_of_both_spellings_are_told_from_other_agents() -> None:
    assert copilot.sniff(camel("bash", {"command": "ls"}))
    assert copilot.sniff(pascal("Bash", {"command": "ls"}))
    native = pascal("Write", {"path": "CLAUDE.md", "file_text": "x"})
    del native["timestamp"]
    assert copilot.sniff(native)  # Copilot's own argument names under Claude's tool name
    for other in (CLAUDE, CURSOR, CLINE, {"hook_event_name": "BeforeTool", "timestamp": "t"}):
        assert not copilot.sniff(other)


def test_claude_codes_hook_hands_copilot_payloads_to_the_copilot_adapter() -> None:
    claude = agents.adapter("claude-code")
    for payload in (camel("create", {"path": "x", "file_text": "y"}), pascal("Bash", {})):
        assert not claude.sniff(payload)
        assert agents.detect(payload, claude).name == "copilot"
    assert agents.detect(CLAUDE, claude).name == "claude-code"
    assert agents.detect(CLAUDE, agents.adapter("copilot")).name == "claude-code"


# -- the event: on argv, in hook_event_name, or told from the payload ----------------------------


@pytest.mark.parametrize(
    ("payload", "event", "phase"),
    [
        (camel("bash", {"command": "ls"}), "preToolUse", "pre"),
        (camel("bash", {"command": "ls"}), "postToolUse", "post"),
        (camel("bash", {"command": "ls"}), "PostToolUse", "post"),
        (camel("bash", {"command": "ls"}), "postToolUseFailure", "other"),
        (camel("bash", {"command": "ls"}), "sessionStart", "other"),
        (camel("bash", {"command": "ls"}), None, "pre"),
        (camel("bash", {"command": "ls"}, toolResult={"resultType": "success"}), None, "post"),
        (camel("bash", {"command": "ls"}, error="boom"), None, "other"),
        (pascal("Bash", {"command": "ls"}), None, "pre"),
        (pascal("Bash", {"command": "ls"}, "PostToolUse"), None, "post"),
        (pascal("Bash", {"command": "ls"}, "PostToolUseFailure"), None, "other"),
    ],
)
def test_the_phase_comes_from_argv_else_the_payload(
    payload: dict[str, Any], event: str | None, phase: str
) -> None:
    got = copilot.parse(payload, event, "/elsewhere")
    assert (got.phase, got.session) == (phase, SESSION)
    assert len(got.calls) == (phase != "other")


def test_a_post_tool_event_carries_post_tool_calls() -> None:
    (call,) = calls(camel("bash", {"command": "ls"}), "postToolUse")
    assert (call.event, call.tool, call.command) == ("PostToolUse", "Bash", "ls")


# -- tools -----------------------------------------------------------------------------------------

CREATE = {"path": f"{REPO}/CLAUDE.md", "file_text": "# Project memory\n"}
EDIT = {
    "path": f"{REPO}/memory/decisions.md",
    "old_str": "- 2026-09-01: use sqlite\n",
    "new_str": "- 2026-09-01: use postgres\n",
}
CLAUDE_EDIT = pre(
    "Edit",
    file_path=f"{REPO}/memory/decisions.md",
    edits=(("- 2026-09-01: use sqlite\n", "- 2026-09-01: use postgres\n", False),),
)
CLAUDE_WRITE = pre("Write", file_path=f"{REPO}/CLAUDE.md", content="# Project memory\n")


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (camel("create", json.dumps(CREATE)), CLAUDE_WRITE),
        (camel("create", CREATE), CLAUDE_WRITE),
        (camel("create", {"path": "CLAUDE.md", "file_text": "# Project memory\n"}), CLAUDE_WRITE),
        (camel("edit", json.dumps(EDIT)), CLAUDE_EDIT),
        (camel("edit", EDIT), CLAUDE_EDIT),
        (camel("str_replace_editor", {"command": "create", **CREATE}), CLAUDE_WRITE),
        (camel("str_replace_editor", {"command": "str_replace", **EDIT}), CLAUDE_EDIT),
        (camel("bash", {"command": "ls", "mode": "sync"}), pre("Bash", command="ls")),
        (camel("powershell", '{"command": "ls"}'), pre("Bash", command="ls")),
        (pascal("Write", CREATE), CLAUDE_WRITE),
        (
            pascal("Write", {"file_path": "CLAUDE.md", "content": "# Project memory\n"}),
            CLAUDE_WRITE,
        ),
        (pascal("Edit", EDIT), CLAUDE_EDIT),
        (
            pascal(
                "Edit",
                {
                    "file_path": "memory/decisions.md",
                    "old_string": "- 2026-09-01: use sqlite\n",
                    "new_string": "- 2026-09-01: use postgres\n",
                },
            ),
            CLAUDE_EDIT,
        ),
        (pascal("Bash", {"command": "ls"}), pre("Bash", command="ls")),
    ],
)
def test_each_tool_becomes_the_cores_call(payload: dict[str, Any], expected: ToolCall) -> None:
    assert calls(payload) == (expected,)


@pytest.mark.parametrize(
    "payload",
    [
        camel("view", '{"path": "/home/dev/repo/CLAUDE.md"}'),
        camel("grep", {"pattern": "x"}),
        camel("web_fetch", "not even json"),
        camel("str_replace_editor", {"command": "insert", "path": "x", "insert_line": 1}),
        camel("str_replace_editor", {"command": "undo_edit", "path": "x"}),
        pascal("Read", {"path": "CLAUDE.md"}),
    ],
)
def test_tools_the_gate_does_not_judge_give_no_calls(payload: dict[str, Any]) -> None:
    assert calls(payload) == ()


PATCH = """*** Begin Patch
*** Add File: notes/new.md
+# New
*** Update File: /home/dev/repo/memory/decisions.md
@@
 Use SQLite for the local cache.
+Use Postgres for reports.
*** Delete File: memory/old.md
*** Update File: memory/a.md
*** Move to: memory/b.md
@@
-old line
+new line
*** Update File: memory/c.md
*** Move to: memory/it's.md
*** End Patch
"""


@pytest.mark.parametrize(
    "payload",
    [
        camel("apply_patch", PATCH),
        camel("apply_patch", {"input": PATCH}),
        camel("apply_patch", json.dumps({"input": PATCH})),
        pascal("Edit", PATCH),  # apply_patch is "Edit" to Claude's matchers
    ],
)
def test_apply_patch_becomes_one_call_per_file_operation(payload: dict[str, Any]) -> None:
    assert calls(payload) == (
        pre("Write", file_path=f"{REPO}/notes/new.md", content="# New\n"),
        pre(
            "Edit",
            file_path=f"{REPO}/memory/decisions.md",
            edits=(
                (
                    "Use SQLite for the local cache.\n",
                    "Use SQLite for the local cache.\nUse Postgres for reports.\n",
                    False,
                ),
            ),
        ),
        pre("Bash", command=f"rm -- {REPO}/memory/old.md"),
        pre("Edit", file_path=f"{REPO}/memory/a.md", edits=(("old line\n", "new line\n", False),)),
        pre("Bash", command=f"mv -- {REPO}/memory/a.md {REPO}/memory/b.md"),
        pre("Bash", command=f"mv -- {REPO}/memory/c.md '{REPO}/memory/it'\"'\"'s.md'"),
    )


def test_a_json_string_holding_patch_text_is_read_as_json() -> None:
    args = json.dumps({"path": "doc.md", "file_text": "*** Begin Patch\n*** End Patch\n"})
    (call,) = calls(camel("create", args))
    assert (call.tool, call.content) == ("Write", "*** Begin Patch\n*** End Patch\n")


def test_the_cwd_falls_back_to_the_process_and_the_session_may_be_missing() -> None:
    payload = camel("create", {"path": "CLAUDE.md", "file_text": "x"})
    del payload["cwd"], payload["sessionId"]
    got = copilot.parse(payload, "preToolUse", "/elsewhere")
    assert got.session == ""
    assert got.calls[0].file_path == "/elsewhere/CLAUDE.md"


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        (camel("create", "neither json nor a patch"), "create: the arguments are neither"),
        (camel("edit", "[1, 2]"), "edit: the arguments are not an object"),
        (camel("edit", None), "edit: the arguments are not an object"),
        (camel("create", {"file_text": "x"}), "create: no path"),
        (camel("create", {"path": 7, "file_text": "x"}), "create: path is not a string"),
        (camel("create", {"path": "x"}), "create: neither an old string"),
        (camel("edit", {"path": "x", "old_str": 1}), "edit: old_str is not a string"),
        (camel("bash", {"description": "no command"}), "bash: the command is missing"),
        (camel("bash", "echo hi"), "bash: the arguments are neither"),
        (camel("apply_patch", "*** Begin Patch\n*** Frobnicate: x\n"), "apply_patch: line 2"),
        (pascal("Edit", {"path": "x", "edits": [1]}), "Edit: an edit is not an object"),
    ],
)
def test_unreadable_arguments_are_a_bad_payload(payload: dict[str, Any], says: str) -> None:
    with pytest.raises(BadPayload, match="^" + says.replace("(", r"\(")):
        calls(payload)


# -- answers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        (Decision(), {}),
        (Decision("allow", "WAIT: b", "WAIT: b"), {"additionalContext": "WAIT: b"}),
        (Decision("deny", "no"), {"permissionDecision": "deny", "permissionDecisionReason": "no"}),
        (
            Decision("ask", "ok?", "ok?"),
            {"permissionDecision": "ask", "permissionDecisionReason": "ok?"},
        ),
    ],
)
def test_decisions_are_rendered_flat_with_exit_0(
    decision: Decision, expected: dict[str, str]
) -> None:
    answer = copilot.render(decision)
    assert (answer.stdout, answer.code) == (json.dumps(expected) + "\n", 0)


@pytest.mark.parametrize("phase", ["pre", "post", "other"])
def test_the_allow_is_an_empty_object_and_exit_0_on_every_path(phase: Phase) -> None:
    assert (copilot.allow(phase).stdout, copilot.allow(phase).code) == ("{}\n", 0)


# -- Copilot fails closed: no failure may exit non-zero or print anything but a decision ----------


def run_hook(raw: bytes, event: str | None = "preToolUse") -> tuple[int, str, str]:
    from memkeeper.gate.hook import run

    out, err = io.StringIO(), io.StringIO()
    code = run("copilot", None, None, io.BytesIO(raw), out, err, event=event)
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
    body = json.dumps(camel("create", {"path": str(tmp_path / "x.md"), "file_text": "x"}))
    monkeypatch.setattr(decide, "decide", boom)
    assert run_hook(body.encode()) == (
        0,
        "{}\n",
        "memkeeper hook copilot: the gate failed (RuntimeError: the core broke); allowed\n",
    )
    monkeypatch.setattr(hook, "gather", boom)
    assert run_hook(body.encode())[:2] == (0, "{}\n")
    broken = copilot.ADAPTER._replace(render=boom)  # the adapter's own answer cannot fail it
    monkeypatch.setattr(copilot, "ADAPTER", broken)
    assert run_hook(body.encode())[:2] == (0, "{}\n")


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
KEYS = st.sampled_from(
    ["path", "file_path", "file_text", "content", "old_str", "new_str", "command", "edits", "input"]
)
ARGS = st.dictionaries(KEYS, JSONISH | st.just("*** Begin Patch\n*** End Patch\n"), max_size=4)
TOOLS = st.sampled_from(
    [
        "create",
        "edit",
        "apply_patch",
        "bash",
        "powershell",
        "str_replace_editor",
        "Write",
        "Edit",
        "Bash",
        "view",
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tool=TOOLS,
    args=ARGS | ARGS.map(json.dumps) | JSONISH,
    event=st.sampled_from(["preToolUse", "postToolUse", None, "junk"]),
)
def test_whatever_the_payload_the_hook_exits_0_with_a_json_object(
    tmp_path: Path, tool: str, args: object, event: str | None
) -> None:
    payload = camel(tool, args)
    payload["cwd"] = str(tmp_path)  # in no memory root: nothing is written
    code, stdout, _ = run_hook(json.dumps(payload).encode(), event)
    assert code == 0
    assert isinstance(json.loads(stdout), dict)


def test_the_channel_reaches_copilot_after_a_tool_call_only() -> None:
    assert copilot.ADAPTER.tell is not None
    assert json.loads(copilot.ADAPTER.tell("post", "for you").stdout) == {
        "additionalContext": "for you"
    }
    assert json.loads(copilot.ADAPTER.tell("pre", "x").stdout) == {}
