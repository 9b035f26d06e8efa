"""The Cline adapter: both runners' payloads (the VS Code extension's string map, the CLI's
raw ``tool_call.input``) and both generations of tools read into the core's calls, and the
core's decisions as Cline's ``cancel`` answers.

The payload shapes are those of docs/reference.md §7 "Cline", after cline/cline @ 21cb8d2:
the VS Code payload from ``apps/vscode/src/sdk/hooks-adapter.ts`` (``beforeTool``,
``toStringRecord``) and ``apps/vscode/src/core/hooks/hook-factory.ts`` (``completeParams``);
the CLI's from ``sdk/packages/core/src/hooks/hook-file-hooks.ts`` (``createPayloadBase``,
``runToolCallStart``, ``mapParams``); the tools' inputs from
``sdk/packages/core/src/extensions/tools/schemas.ts`` (``EditFileInputSchema``,
``ApplyPatchInputUnionSchema``, ``RunCommandsInputUnionSchema``); the pre-SDK tools from
``docs/features/hooks/hook-reference.mdx`` @ e884699d24^ and
``src/core/assistant-message/diff.ts`` @ 791d238996^ (the SEARCH/REPLACE markers).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.gate import agents
from memkeeper.gate.agents import cline
from memkeeper.gate.facts import Decision
from memkeeper.gate.payload import BadPayload, ToolCall

TASK = "01K9Z2X7R4C1B8D3E5F6G7H8J9"
REPO = "/home/dev/repo"


def vscode(tool: str, params: dict[str, str], hook: str = "PreToolUse") -> dict[str, Any]:
    """The VS Code extension's payload: every parameter a string (``toStringRecord``)."""
    block = "preToolUse" if hook == "PreToolUse" else "postToolUse"
    data: dict[str, Any] = {"toolName": tool, "parameters": params}
    if hook == "PostToolUse":
        data.update(result="ok", success=True, executionTimeMs=12)
    return {
        "clineVersion": "4.2.0",
        "hookName": hook,
        "timestamp": "1791176775012",
        "taskId": TASK,
        "workspaceRoots": [REPO],
        "userId": "c0ffee00-1111-2222-3333-444455556666",
        "model": {"provider": "unknown", "slug": "unknown"},
        block: data,
    }


def sdk(tool: str, raw: object, hook: str = "tool_call", **extra: Any) -> dict[str, Any]:
    """The CLI's payload: the raw input in ``tool_call`` and the string map beside it."""
    params = (
        {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}
        if isinstance(raw, dict)
        else {}
    )
    pre = hook == "tool_call"
    call: dict[str, Any] = {"id": "call_456", "name": tool, "input": raw}
    if not pre:
        call.update(output="ok", durationMs=12)
    return {
        "clineVersion": "",
        "hookName": hook,
        "timestamp": "2026-10-05T10:00:03.789Z",
        "taskId": "conv_8c1d",
        "sessionContext": {"rootSessionId": "conv_8c1d"},
        "workspaceRoots": [REPO],
        "userId": "dev",
        "agent_id": "agent_1",
        "parent_agent_id": None,
        "iteration": 3,
        "tool_call" if pre else "tool_result": call,
        "preToolUse" if pre else "postToolUse": {"toolName": tool, "parameters": params},
        **extra,
    }


def calls(payload: dict[str, Any], event: str | None = None) -> tuple[ToolCall, ...]:
    return cline.parse(payload, event, "/elsewhere").calls


def pre(tool: str, session: str = TASK, call_id: str = "", **fields: Any) -> ToolCall:
    return ToolCall("PreToolUse", tool, REPO, session, call_id, **fields)


def post(tool: str, session: str = TASK, call_id: str = "", **fields: Any) -> ToolCall:
    return ToolCall("PostToolUse", tool, REPO, session, call_id, **fields)


def sdk_pre(tool: str, **fields: Any) -> ToolCall:
    return pre(tool, "conv_8c1d", "call_456", **fields)


DECISIONS = f"{REPO}/memory/decisions.md"
CLAUDE_MD = f"{REPO}/CLAUDE.md"

# -- which payloads are Cline's ------------------------------------------------------------------

CLAUDE = {
    "session_id": "abc123",
    "transcript_path": "/home/dev/.claude/projects/x.jsonl",
    "cwd": REPO,
    "hook_event_name": "PreToolUse",
    "tool_name": "Write",
    "tool_input": {"file_path": CLAUDE_MD, "content": "x"},
}


def test_both_runners_payloads_are_clines_and_claude_codes_is_not() -> None:
    assert cline.sniff(vscode("editor", {"path": "x", "new_text": "y"}))
    assert cline.sniff(sdk("run_commands", {"commands": ["ls"]}))
    assert cline.sniff({"clineVersion": "4.2.0", "preToolUse": {}})  # no hookName: still Cline
    assert not cline.sniff(CLAUDE)
    assert not cline.sniff({"sessionId": "s", "toolName": "bash", "toolArgs": {}})  # Copilot


def test_a_cline_payload_reaching_another_agents_command_is_read_as_clines() -> None:
    payload = vscode("run_commands", {"commands": '["ls"]'})
    assert agents.detect(payload, agents.adapter("claude-code")).name == "cline"
    assert agents.detect(payload, cline.ADAPTER) is cline.ADAPTER
    assert agents.detect(CLAUDE, cline.ADAPTER).name == "claude-code"
    assert "cline" in agents.AGENTS


# -- events and sessions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hook", "phase"),
    [
        ("PreToolUse", "pre"),
        ("tool_call", "pre"),
        ("PostToolUse", "post"),
        ("tool_result", "post"),
        ("TaskStart", "start"),
        ("TaskResume", "start"),
        ("UserPromptSubmit", "prompt"),
        ("agent_start", "other"),
        ("Notification", "other"),
    ],
)
def test_the_phase_comes_from_hook_name_in_either_runners_spelling(hook: str, phase: str) -> None:
    payload = {"hookName": hook, "taskId": TASK, "taskStart": {}}
    if phase == "pre":
        payload["preToolUse"] = {"toolName": "read_files", "parameters": {}}
    if phase == "post":
        payload["postToolUse"] = {"toolName": "read_files", "parameters": {}}
    assert cline.parse(payload, None, REPO).phase == phase


def test_the_channels_events_carry_the_task_and_its_workspace_in_either_runner() -> None:
    start = {"hookName": "TaskStart", "taskId": TASK, "workspaceRoots": [REPO], "taskStart": {}}
    got = cline.parse(start, "TaskStart", "/elsewhere")
    assert (got.phase, got.session, got.cwd, got.calls) == ("start", TASK, REPO, ())
    sdk_prompt = {"hookName": "prompt_submit", "taskId": TASK, "workspaceRoots": [REPO]}
    assert cline.parse(sdk_prompt, "UserPromptSubmit", REPO).phase == "prompt"  # argv's event


def test_the_channel_reaches_cline_as_context_modification_and_goes_ahead() -> None:
    assert cline.ADAPTER.tell is not None
    for phase in ("start", "prompt", "post"):
        said = json.loads(cline.ADAPTER.tell(phase, "for you").stdout)
        assert said == {"cancel": False, "contextModification": "for you"}


def test_without_hook_name_the_event_on_argv_names_the_phase() -> None:
    payload = vscode("read_files", {})
    del payload["hookName"]
    assert cline.parse(payload, "PreToolUse", REPO).phase == "pre"
    with pytest.raises(BadPayload, match="hookName"):
        cline.parse(payload, None, REPO)


def test_the_session_is_the_task_and_a_sub_agent_adds_its_id() -> None:
    assert cline.parse(vscode("read_files", {}), None, REPO).session == TASK
    root = sdk("read_files", {})
    assert cline.parse(root, None, REPO).session == "conv_8c1d"
    sub = {**root, "agent_id": "agent_2", "parent_agent_id": "agent_1"}
    assert cline.parse(sub, None, REPO).session == "conv_8c1d/agent_2"
    del root["taskId"]
    assert cline.parse(root, None, REPO).session == ""


def test_relative_paths_are_taken_from_the_first_workspace_root() -> None:
    payload = vscode("editor", {"path": "memory/decisions.md", "old_text": "a", "new_text": "b"})
    assert calls(payload)[0].file_path == DECISIONS
    payload["workspaceRoots"] = []  # proto3 may leave it out: the hook's own cwd then
    assert calls(payload)[0].file_path == "/elsewhere/memory/decisions.md"


# -- editor --------------------------------------------------------------------------------------


def test_an_editor_replacement_is_an_edit_in_both_runners() -> None:
    raw = {"path": DECISIONS, "old_text": "use sqlite\n", "new_text": "use postgres\n"}
    edits = (("use sqlite\n", "use postgres\n", False),)
    assert calls(vscode("editor", raw)) == (pre("Edit", file_path=DECISIONS, edits=edits),)
    assert calls(sdk("editor", raw)) == (sdk_pre("Edit", file_path=DECISIONS, edits=edits),)


def test_an_editor_call_without_old_text_only_creates_a_file() -> None:
    """The tool refuses to overwrite an existing file then: an Edit with an empty old
    string, which the core judges as the create it may be."""
    create = (pre("Edit", file_path=CLAUDE_MD, edits=(("", "# New\n", False),)),)
    assert calls(vscode("editor", {"path": CLAUDE_MD, "new_text": "# New\n"})) == create
    nulls = {"path": CLAUDE_MD, "old_text": "null", "new_text": "# New\n", "insert_line": "null"}
    assert calls(vscode("editor", nulls)) == create  # JSON.stringify(null), as strict models send
    raw = {"path": CLAUDE_MD, "old_text": None, "new_text": "# New\n", "insert_line": None}
    assert calls(sdk("editor", raw))[0].edits == (("", "# New\n", False),)


def test_an_editor_insertion_is_not_judged_before_but_indexed_after() -> None:
    params = {"path": DECISIONS, "new_text": "- more\n", "insert_line": "9"}
    assert calls(vscode("editor", params)) == ()
    assert calls(vscode("editor", params, "PostToolUse")) == (post("Edit", file_path=DECISIONS),)


@pytest.mark.parametrize(
    "params",
    [{"new_text": "x"}, {"path": "", "new_text": "x"}, {"path": DECISIONS}],
    ids=["no path", "empty path", "no new_text"],
)
def test_an_editor_input_the_tool_would_reject_is_a_bad_payload(params: dict[str, str]) -> None:
    with pytest.raises(BadPayload, match="editor"):
        calls(vscode("editor", params))


# -- apply_patch ---------------------------------------------------------------------------------

PATCH = """*** Begin Patch
*** Add File: CLAUDE.md
+# Project memory
+
+Rewritten from scratch.
*** Update File: memory/decisions.md
@@
 Use SQLite for the local cache; Postgres stays the system of record.
+
+## 2026-12-01 — cline
+
+More.
*** Delete File: memory/risks.md
*** Update File: memory/architecture.md
*** Move to: memory/arch.md
@@
-# Architecture
+# Architecture notes
*** End Patch
"""
SQLITE = "Use SQLite for the local cache; Postgres stays the system of record.\n"


def test_a_patch_is_one_call_per_file_operation() -> None:
    got = calls(sdk("apply_patch", {"input": PATCH}))
    assert got == (
        sdk_pre(
            "Write",
            file_path=CLAUDE_MD,
            content="# Project memory\n\nRewritten from scratch.",  # Cline joins the lines
        ),
        sdk_pre(
            "Edit",
            file_path=DECISIONS,
            edits=((SQLITE, SQLITE + "\n## 2026-12-01 — cline\n\nMore.\n", False),),
        ),
        sdk_pre("Bash", command="rm -- memory/risks.md"),
        sdk_pre(
            "Edit",
            file_path=f"{REPO}/memory/architecture.md",
            edits=(("# Architecture\n", "# Architecture notes\n", False),),
        ),
        sdk_pre("Bash", command="mv -- memory/architecture.md memory/arch.md"),
    )


def test_a_patch_arrives_as_a_bare_string_or_in_the_string_map_too() -> None:
    add = "*** Begin Patch\n*** Add File: CLAUDE.md\n+x\n*** End Patch"
    expected = sdk_pre("Write", file_path=CLAUDE_MD, content="x")
    assert calls(sdk("apply_patch", add)) == (expected,)
    assert calls(vscode("apply_patch", {"input": add})) == (
        pre("Write", file_path=CLAUDE_MD, content="x"),
    )


def test_a_patch_without_its_envelope_is_read_as_cline_reads_it() -> None:
    bare = "apply_patch <<'EOF'\n*** Add File: notes.md\n+hello\nEOF\n\n"
    assert calls(sdk("apply_patch", {"input": bare})) == (
        sdk_pre("Write", file_path=f"{REPO}/notes.md", content="hello"),
    )


def test_a_patch_that_does_not_parse_is_a_bad_payload() -> None:
    with pytest.raises(BadPayload, match="apply_patch"):
        calls(sdk("apply_patch", {"input": "*** Begin Patch\n*** Frobnicate: x\n*** End Patch"}))
    with pytest.raises(BadPayload, match="apply_patch"):
        calls(sdk("apply_patch", {"patch": PATCH}))


# -- run_commands --------------------------------------------------------------------------------

APPEND = "echo x >> memory/decisions.md"


@pytest.mark.parametrize(
    ("raw", "commands"),
    [
        ({"commands": [APPEND, "ls"]}, [APPEND, "ls"]),
        (
            {"commands": [{"command": "git", "args": ["commit", "-m", "a b"]}]},
            ["git commit -m 'a b'"],
        ),
        ({"commands": APPEND}, [APPEND]),
        ({"commands": {"command": APPEND}}, [APPEND]),
        ([{"command": "rm", "args": ["CLAUDE.md"]}], ["rm CLAUDE.md"]),
        ({"command": "tee", "args": [">", "x"]}, ["tee '>' x"]),  # no shell: `>` is a word
        ({"command": APPEND}, [APPEND]),
        ({"cmd": APPEND}, [APPEND]),
        ([APPEND, "ls"], [APPEND, "ls"]),
        (APPEND, [APPEND]),
    ],
    ids=[
        "commands strings",
        "commands entries",
        "commands string",
        "commands entry",
        "entries",
        "entry",
        "command",
        "cmd",
        "strings",
        "string",
    ],
)
def test_every_run_commands_shape_becomes_one_bash_call_per_command(
    raw: object, commands: list[str]
) -> None:
    got = calls(sdk("run_commands", raw))
    assert got == tuple(sdk_pre("Bash", command=c) for c in commands)


def test_the_vscode_string_map_holds_commands_as_json_or_as_the_command_itself() -> None:
    assert calls(vscode("run_commands", {"commands": json.dumps([APPEND])})) == (
        pre("Bash", command=APPEND),
    )
    assert calls(vscode("run_commands", {"commands": APPEND})) == (pre("Bash", command=APPEND),)
    test = "[ -f CLAUDE.md ] && echo x >> CLAUDE.md"  # starts like JSON, is not
    assert calls(vscode("run_commands", {"commands": test})) == (pre("Bash", command=test),)
    structured = {"command": "rm", "args": '["CLAUDE.md"]'}
    assert calls(vscode("run_commands", structured)) == (pre("Bash", command="rm CLAUDE.md"),)


@pytest.mark.parametrize(
    "raw",
    [{"commands": [3]}, {"commands": None}, {"args": ["x"]}, {"command": "rm", "args": "x"}, 5],
    ids=["a number", "null", "no command", "args not a list", "not an object"],
)
def test_a_run_commands_input_with_no_command_is_a_bad_payload(raw: object) -> None:
    with pytest.raises(BadPayload, match="run_commands"):
        calls(sdk("run_commands", raw))


# -- the pre-SDK tools -----------------------------------------------------------------------------


def test_write_to_file_is_a_write() -> None:
    params = {"path": "CLAUDE.md", "content": "# Project memory\n"}
    assert calls(vscode("write_to_file", params)) == (
        pre("Write", file_path=CLAUDE_MD, content="# Project memory\n"),
    )


def test_execute_command_is_a_bash_call() -> None:
    params = {"command": APPEND, "requires_approval": "false"}
    assert calls(vscode("execute_command", params)) == (pre("Bash", command=APPEND),)


def test_replace_in_file_is_an_edit_of_each_search_replace_block() -> None:
    diff = (
        "------- SEARCH\nUse SQLite\n=======\nUse Postgres\n+++++++ REPLACE\n"
        "<<<<<<< SEARCH\nold two\n=======\nnew two\n>>>>>>> REPLACE\n"
        "------- SEARCH\nopen\n=======\nended by the diff"
    )
    got = calls(vscode("replace_in_file", {"path": "memory/decisions.md", "diff": diff}))
    assert got == (
        pre(
            "Edit",
            file_path=DECISIONS,
            edits=(
                ("Use SQLite\n", "Use Postgres\n", False),
                ("old two\n", "new two\n", False),
                ("open\n", "ended by the diff\n", False),
            ),
        ),
    )


def test_an_empty_search_block_only_creates_as_in_cline() -> None:
    diff = "------- SEARCH\n=======\n# New\n+++++++ REPLACE"
    assert cline.search_replace(diff) == (("", "# New\n", False),)


# -- what is not judged, and what is not readable --------------------------------------------------


@pytest.mark.parametrize(
    "tool", ["read_files", "search_codebase", "fetch_web_content", "ask_question", "mem__write"]
)
def test_other_tools_are_not_judged(tool: str) -> None:
    assert calls(sdk(tool, {"path": CLAUDE_MD, "content": "x"})) == ()


@pytest.mark.parametrize(
    "payload",
    [
        {"hookName": "PreToolUse", "taskId": TASK},
        {"hookName": "PreToolUse", "preToolUse": {"parameters": {}}},
        {"hookName": "PreToolUse", "preToolUse": {"toolName": "editor", "parameters": "x"}},
        {"hookName": "PreToolUse", "preToolUse": []},
        {"hookName": 3, "preToolUse": {"toolName": "editor"}},
    ],
    ids=["no tool", "no toolName", "parameters not an object", "block not an object", "hookName"],
)
def test_a_tool_event_without_a_readable_tool_is_a_bad_payload(payload: dict[str, Any]) -> None:
    with pytest.raises(BadPayload):
        calls(payload)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
TOOLS = st.sampled_from(
    ["editor", "apply_patch", "run_commands", "write_to_file", "replace_in_file", "x"]
)


@given(
    st.sampled_from(["PreToolUse", "tool_call", "PostToolUse", "tool_result"]),
    TOOLS,
    JSON,
    JSON,
)
def test_any_input_is_read_or_refused_as_a_bad_payload(
    hook: str, tool: str, raw: object, params: object
) -> None:
    """Nothing in a payload makes the adapter fail with anything but ``BadPayload``."""
    block = "preToolUse" if hook in ("PreToolUse", "tool_call") else "postToolUse"
    sdk_block = "tool_call" if block == "preToolUse" else "tool_result"
    payload = {
        "hookName": hook,
        "workspaceRoots": [REPO],
        block: {"toolName": tool, "parameters": params},
        sdk_block: {"name": tool, "input": raw},
    }
    try:
        got = cline.parse(payload, None, REPO)
    except BadPayload:
        return
    assert all(call.cwd == REPO for call in got.calls)


# -- the answers ---------------------------------------------------------------------------------


def answer(decision: Decision) -> dict[str, Any]:
    done = cline.render(decision)
    assert done.code == 0
    assert done.stdout.endswith("}\n")
    loaded = json.loads(done.stdout)
    assert isinstance(loaded, dict)
    return loaded


def test_a_silent_allow_is_cancel_false() -> None:
    assert answer(Decision()) == {"cancel": False}


def test_an_advisory_wait_goes_to_the_models_next_turn() -> None:
    wait = "WAIT: agent-a holds an advisory write claim c1 on CLAUDE.md#build"
    assert answer(Decision("allow", wait, wait)) == {"cancel": False, "contextModification": wait}


def test_a_deny_cancels_the_task_and_says_so_and_what_to_run() -> None:
    reason = "memory/decisions.md is append-only: … `memkeeper append memory/decisions.md`"
    got = answer(Decision("deny", reason))
    assert set(got) == {"cancel", "errorMessage"}
    assert got["cancel"] is True
    message = got["errorMessage"]
    assert reason in message
    assert "Cline stops the whole task" in message
    assert "resume the task and do this instead" in message


def test_an_ask_cancels_the_task_and_hands_the_change_to_the_human() -> None:
    question = "CLAUDE.md#release-process belongs to human (policy .memkeeper.yaml)"
    got = answer(Decision("ask", question, question))
    assert got["cancel"] is True
    assert question in got["errorMessage"]
    assert "If you approve, make this change yourself" in got["errorMessage"]


@pytest.mark.parametrize("phase", ["pre", "post", "other"])
def test_the_allow_on_every_path_is_cancel_false_exit_0(phase: Any) -> None:
    got = cline.allow(phase)
    assert (got.stdout, got.code) == ('{"cancel": false}\n', 0)
