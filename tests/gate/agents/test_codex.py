"""The Codex adapter: its PreToolUse/PostToolUse payloads read into the core's calls —
``apply_patch`` file by file, ``Bash`` unwrapped — and the core's decisions in the one
output shape Codex accepts (anything else it does not support fails open).

The payload shapes are those documented in docs/reference.md §7 "Codex CLI" (from
openai/codex ``codex-rs/hooks/src/events/pre_tool_use.rs`` ``command_input_json`` @
0082977c, the apply_patch input of PR #18391 and ``apply_patch_tests.rs``, the argv join of
``shell_payload_command``); the answers those of the same section and the
developers.openai.com/codex/hooks
page (copy: mehmetbaykar/codex-docs-skill ``references/hooks.md`` @ f033ea2e, "PreToolUse":
deny, and ``additionalContext`` "to add model-visible context without blocking").
"""

from __future__ import annotations

import io
import json
import shlex
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memkeeper.gate import agents
from memkeeper.gate.agents import codex
from memkeeper.gate.facts import Decision
from memkeeper.gate.payload import BadPayload, ToolCall

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.gate.agents.base import Phase

SESSION = "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b"
REPO = "/home/dev/repo"


def payload(
    tool: str, tool_input: object, event: str = "PreToolUse", **extra: Any
) -> dict[str, Any]:
    """A Codex tool event: the common fields and what PreToolUse adds."""
    return {
        "session_id": SESSION,
        "turn_id": "019a2b3c-5555-7000-8000-000000000001",
        "transcript_path": None,
        "cwd": REPO,
        "hook_event_name": event,
        "model": "gpt-5.5-codex",
        "permission_mode": "default",
        "tool_name": tool,
        "tool_use_id": "call_9f2a1c",
        "tool_input": tool_input,
        **extra,
    }


def patch(*body: str) -> dict[str, str]:
    return {"command": "*** Begin Patch\n" + "".join(body) + "*** End Patch\n"}


def call(tool: str, event: str = "PreToolUse", cwd: str = REPO, **fields: Any) -> ToolCall:
    return ToolCall(event, tool, cwd, SESSION, "call_9f2a1c", **fields)


def calls(body: dict[str, Any]) -> tuple[ToolCall, ...]:
    return codex.parse(body, None, "/proc-cwd").calls


# -- which payloads are Codex's -------------------------------------------------------------------


def test_codex_payloads_are_told_from_other_agents() -> None:
    assert codex.sniff(payload("Bash", {"command": "ls"}))
    assert codex.sniff(payload("apply_patch", patch()))
    no_turn = payload("apply_patch", patch())
    del no_turn["turn_id"], no_turn["model"]
    assert codex.sniff(no_turn)  # its own tool name is enough
    claude = {"session_id": "s", "cwd": REPO, "hook_event_name": "PreToolUse", "tool_name": "Bash"}
    assert not codex.sniff(claude)
    cursor = {**claude, "model": "default", "cursor_version": "2026.10.01"}
    assert not codex.sniff(cursor)
    assert not codex.sniff(
        {**claude, "timestamp": "2026-10-05T10:00:01Z", "tool_name": "apply_patch"}
    )
    assert not codex.sniff(payload("Bash", {"command": "ls"}, event="BeforeTool"))


def test_the_claude_code_hook_hands_a_codex_payload_to_the_codex_adapter() -> None:
    body = payload("apply_patch", patch())
    assert agents.detect(body, agents.adapter("claude-code")).name == "codex"
    assert agents.detect(body, agents.adapter("codex")).name == "codex"


def test_the_phase_the_session_and_a_sub_agent() -> None:
    pre = codex.parse(payload("Bash", {"command": "ls"}), None, "/")
    post = codex.parse(payload("Bash", {"command": "ls"}, "PostToolUse", agent_id="a7"), None, "/")
    assert (pre.phase, pre.session) == ("pre", SESSION)
    assert (post.phase, post.session) == ("post", f"{SESSION}/a7")
    assert post.calls == (call("Bash", "PostToolUse", command="ls"),)
    other = codex.parse({**payload("Bash", {}), "hook_event_name": "Stop"}, None, "/")
    assert other == codex.parse({}, None, "/") == codex.parse({}, "Stop", "/")
    assert other.phase == "other"


def test_the_cwd_falls_back_to_the_process_and_the_session_may_be_missing() -> None:
    body = payload("apply_patch", patch("*** Delete File: a.md\n"))
    del body["cwd"], body["session_id"]
    got = codex.parse(body, None, "/elsewhere")
    assert got.session == ""
    assert got.calls[0].cwd == "/elsewhere"


# -- apply_patch: one call per file ---------------------------------------------------------------


def test_an_added_file_is_a_write_of_its_whole_content() -> None:
    body = payload("apply_patch", patch("*** Add File: CLAUDE.md\n+# Project memory\n+\n+New.\n"))
    assert calls(body) == (
        call("Write", file_path=f"{REPO}/CLAUDE.md", content="# Project memory\n\nNew.\n"),
    )


def test_an_update_is_an_edit_with_one_step_per_chunk() -> None:
    body = payload(
        "apply_patch",
        patch(
            "*** Update File: memory/decisions.md\n@@\n",
            "-- 2026-09-01: use sqlite\n+- 2026-09-01: use postgres\n",
            "@@ ## Later\n context\n+added\n",
        ),
    )
    assert calls(body) == (
        call(
            "Edit",
            file_path=f"{REPO}/memory/decisions.md",
            edits=(
                ("- 2026-09-01: use sqlite\n", "- 2026-09-01: use postgres\n", False),
                ("context\n", "context\nadded\n", False),
            ),
        ),
    )


def test_a_chunk_with_no_old_text_is_left_out_of_the_edit() -> None:
    # Codex adds such a chunk at the end of the file; the rest are still judged
    body = payload("apply_patch", patch("*** Update File: a.md\n@@\n+tail\n@@\n-x\n+y\n"))
    assert calls(body) == (call("Edit", file_path=f"{REPO}/a.md", edits=(("x\n", "y\n", False),)),)


def test_a_delete_and_a_move_are_the_shell_commands_they_amount_to() -> None:
    body = payload(
        "apply_patch",
        patch(
            "*** Delete File: memory/decisions.md\n",
            "*** Update File: memory/a.md\n*** Move to: memory/it's.md\n@@\n-old\n+new\n",
            "*** Update File: CLAUDE.md\n*** Move to: docs/old.md\n",
        ),
    )
    assert calls(body) == (
        call("Bash", command="rm -- memory/decisions.md"),
        call("Edit", file_path=f"{REPO}/memory/a.md", edits=(("old\n", "new\n", False),)),
        call("Bash", command="mv -- memory/a.md 'memory/it'\"'\"'s.md'"),
        call("Edit", file_path=f"{REPO}/CLAUDE.md"),
        call("Bash", command="mv -- CLAUDE.md docs/old.md"),
    )


def test_several_files_in_one_patch_are_all_judged() -> None:
    body = payload(
        "apply_patch",
        patch("*** Add File: notes/todo.md\n+- x\n", "*** Add File: CLAUDE.md\n+# Gone\n"),
    )
    assert [c.file_path for c in calls(body)] == [f"{REPO}/notes/todo.md", f"{REPO}/CLAUDE.md"]


@pytest.mark.parametrize(
    "tool_input",
    [
        {"command": "*** Begin Patch\n*** Frobnicate: x\n*** End Patch\n"},
        {"command": "*** Begin Patch\n*** Add File: x.md\n+x\n"},  # no end
        {"command": "*** Begin Patch\n*** End Patch\n"},  # no file
        {"command": "not a patch"},
        "not a patch either",
    ],
)
def test_a_patch_codex_would_refuse_is_not_judged(tool_input: object) -> None:
    assert calls(payload("apply_patch", tool_input)) == ()


def test_the_patch_may_come_under_the_tools_own_key_or_as_text() -> None:
    text = patch("*** Delete File: a.md\n")["command"]
    expected = (call("Bash", command="rm -- a.md"),)
    assert calls(payload("apply_patch", {"input": text})) == expected
    assert calls(payload("apply_patch", text)) == expected


# -- Bash -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "judged"),
    [
        ("echo x >> memory/decisions.md", "echo x >> memory/decisions.md"),
        ("bash -lc 'echo x >> memory/decisions.md'", "echo x >> memory/decisions.md"),
        ("/bin/sh -c 'rm CLAUDE.md'", "rm CLAUDE.md"),
        ("zsh -e -c \"sed -i 's/a/b/' CLAUDE.md\"", "sed -i 's/a/b/' CLAUDE.md"),
        (["bash", "-lc", "echo 'x' > CLAUDE.md"], "echo 'x' > CLAUDE.md"),
        (["git", "status"], "git status"),
        ("bash script.sh", "bash script.sh"),
        ("bash -c 'unterminated", "bash -c 'unterminated"),
    ],
)
def test_a_shell_command_is_judged_as_the_shell_reads_it(command: object, judged: str) -> None:
    assert calls(payload("Bash", {"command": command})) == (call("Bash", command=judged),)


def test_a_patch_in_a_here_document_is_judged_as_a_patch_too() -> None:
    command = (
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: CLAUDE.md\n+x\n*** End Patch\nEOF\n"
    )
    assert calls(payload("Bash", {"command": command})) == (
        call("Bash", command=command),
        call("Write", file_path=f"{REPO}/CLAUDE.md", content="x\n"),
    )
    in_dir = f"cd memory && {command.replace('CLAUDE.md', 'decisions.md')}"
    assert calls(payload("Bash", {"command": in_dir}))[1].file_path == f"{REPO}/memory/decisions.md"
    wrapped = shlex.join(["bash", "-lc", command])  # the argv shell tool, joined
    assert (
        calls(payload("Bash", {"command": wrapped}))[1:]
        == calls(payload("Bash", {"command": command}))[1:]
    )


def test_a_workdir_is_the_commands_directory() -> None:
    (got,) = calls(payload("Bash", {"command": "ls", "workdir": "memory"}))
    assert got.cwd == f"{REPO}/memory"


@pytest.mark.parametrize(
    "tool",
    ["mcp__filesystem__write_file", "WebSearch", "read_file"],
)
def test_tools_the_gate_does_not_judge_give_no_calls(tool: str) -> None:
    assert calls(payload(tool, {"path": "CLAUDE.md", "content": "x"})) == ()


def test_claude_code_tool_names_are_read_as_claude_codes() -> None:
    body = payload("Write", {"file_path": "CLAUDE.md", "content": "x"})
    assert calls(body) == (call("Write", file_path=f"{REPO}/CLAUDE.md", content="x"),)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (payload("Bash", "ls"), "Bash: tool_input is not an object"),
        (payload("Bash", {}), "Bash: tool_input.command is not a string"),
        (payload("Bash", {"command": 3}), "Bash: tool_input.command is not a string"),
        (payload("apply_patch", None), "apply_patch: tool_input is not an object"),
        (payload("apply_patch", {"command": 1}), "apply_patch: tool_input.command is not"),
        ({**payload("Bash", {"command": "ls"}), "cwd": 7}, "payload.cwd is not a string"),
        ({**payload("Bash", {"command": "ls"}), "session_id": 7}, "payload.session_id is not"),
    ],
)
def test_unreadable_input_is_a_bad_payload(body: dict[str, Any], says: str) -> None:
    with pytest.raises(BadPayload, match="^" + says):
        calls(body)


# -- answers --------------------------------------------------------------------------------------


def pre_tool_use(**fields: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}) + "\n"


@pytest.mark.parametrize(
    ("decision", "stdout"),
    [
        (Decision(), ""),
        (Decision("allow", "WAIT: b", "WAIT: b"), pre_tool_use(additionalContext="WAIT: b")),
        (
            Decision("deny", "no"),
            pre_tool_use(permissionDecision="deny", permissionDecisionReason="no"),
        ),
        (
            Decision("ask", "ok?", "ok?"),
            pre_tool_use(permissionDecision="deny", permissionDecisionReason=codex.ASK + "ok?"),
        ),
        (
            Decision("deny", " "),
            pre_tool_use(
                permissionDecision="deny", permissionDecisionReason="memkeeper denied this call."
            ),
        ),
    ],
)
def test_decisions_are_rendered_in_the_one_shape_codex_accepts(
    decision: Decision, stdout: str
) -> None:
    answer = codex.render(decision)
    assert (answer.stdout, answer.code) == (stdout, 0)


@pytest.mark.parametrize("phase", ["pre", "post", "other"])
def test_the_allow_is_empty_stdout_and_exit_0(phase: Phase) -> None:
    assert (codex.allow(phase).stdout, codex.allow(phase).code) == ("", 0)


@given(
    verdict=st.sampled_from(["allow", "deny", "ask"]),
    reason=st.text(max_size=20),
)
def test_every_answer_is_empty_or_a_valid_pre_tool_use_output(verdict: Any, reason: str) -> None:
    answer = codex.render(Decision(verdict, reason, reason))
    assert answer.code == 0
    if not answer.stdout:
        assert verdict == "allow"
        assert not reason.strip()
        return
    out = json.loads(answer.stdout)
    assert set(out) == {"hookSpecificOutput"}  # Codex rejects unknown keys
    specific = out["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    if verdict == "allow":
        assert set(specific) == {"hookEventName", "additionalContext"}
    else:
        assert set(specific) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
        assert specific["permissionDecision"] == "deny"
        assert specific["permissionDecisionReason"].strip()  # else Codex fails open


# -- Codex fails open, but a crash must not print what it cannot read -----------------------------


def run_hook(raw: bytes) -> tuple[int, str, str]:
    from memkeeper.gate.hook import run

    out, err = io.StringIO(), io.StringIO()
    code = run("codex", None, None, io.BytesIO(raw), out, err)
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
    body = payload("apply_patch", patch("*** Add File: x.md\n+x\n"), cwd=str(tmp_path))
    raw = json.dumps(body).encode()
    code, stdout, _ = run_hook(raw)  # unbroken, the write of history is denied
    assert (code, json.loads(stdout)["hookSpecificOutput"]["permissionDecision"]) == (0, "deny")
    monkeypatch.setattr(decide, "decide", boom)
    assert run_hook(raw) == (
        0,
        "",
        "memkeeper hook codex: the gate failed (RuntimeError: the core broke); allowed\n",
    )
    monkeypatch.setattr(hook, "gather", boom)
    assert run_hook(raw)[:2] == (0, "")
    broken = codex.ADAPTER._replace(render=boom)  # the adapter's own answer cannot fail it
    monkeypatch.setattr(codex, "ADAPTER", broken)
    assert run_hook(raw)[:2] == (0, "")


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
PATCHES = st.sampled_from(
    [
        "*** Begin Patch\n*** Add File: a.md\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: a.md\n*** Move to: b.md\n@@\n-x\n+y\n*** End Patch\n",
        "*** Begin Patch\n*** Delete File: a.md\n*** End Patch\n",
        "bash -lc 'echo x >> a.md'",
    ]
)
INPUTS = st.dictionaries(
    st.sampled_from(["command", "input", "workdir", "file_path", "content"]),
    JSONISH | PATCHES,
    max_size=3,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tool=st.sampled_from(["apply_patch", "Bash", "Write", "Edit", "mcp__fs__write", "shell"]),
    tool_input=INPUTS | JSONISH | PATCHES,
    event=st.sampled_from(["PreToolUse", "PostToolUse", "Stop"]),
)
def test_whatever_the_payload_the_hook_exits_0_with_nothing_codex_cannot_read(
    tmp_path: Path, tool: str, tool_input: object, event: str
) -> None:
    body = payload(tool, tool_input, event, cwd=str(tmp_path))  # in no memory root
    code, stdout, _ = run_hook(json.dumps(body).encode())
    assert (code, stdout) == (0, "")


@pytest.mark.parametrize(
    ("event", "phase"), [("SessionStart", "start"), ("UserPromptSubmit", "prompt")]
)
def test_codexs_session_start_and_prompt_are_the_channels_phases(event: str, phase: str) -> None:
    # codex-rs/hooks/src/schema.rs SessionStartCommandInput: session_id, transcript_path, cwd,
    # hook_event_name, model, permission_mode, source (UserPromptSubmit: turn_id and prompt)
    body = {
        "session_id": SESSION,
        "transcript_path": None,
        "cwd": "/home/dev/repo",
        "hook_event_name": event,
        "model": "gpt-5.5",
        "permission_mode": "default",
        "source": "startup",
    }
    assert codex.sniff(body)
    got = codex.parse(body, None, "/proc")
    assert (got.phase, got.calls, got.session, got.cwd) == (phase, (), SESSION, "/home/dev/repo")
    assert codex.ADAPTER.tell is not None
    said = json.loads(codex.ADAPTER.tell(phase, "memkeeper — for you").stdout)  # type: ignore[arg-type]
    assert said == {
        "hookSpecificOutput": {"hookEventName": event, "additionalContext": "memkeeper — for you"}
    }
