"""The channel's computed notices end to end through the real CLI: a section one session read
and another changed is told to the reader's next prompt hook, once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.e2e.hooktables import initialised

READER = {"CLAUDE_CODE_SESSION_ID": "one", "CLAUDECODE": "1"}
WRITER = {"CODEX_THREAD_ID": "xyz"}


def prompt(root: Path) -> str:
    """What the reader's UserPromptSubmit hook adds to its context ("" for nothing)."""
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "one", "cwd": str(root)}
    done = run_cli(root, "hook", "claude-code", stdin=json.dumps({**payload, "prompt": "go"}))
    assert done.code == 0, done.stderr
    if not done.stdout.strip():
        return ""
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def test_a_section_read_then_patched_by_another_is_told_to_the_next_prompt_once(
    tmp_path: Path,
) -> None:
    root = initialised(tmp_path / "repo")
    read = run_cli(root, "read", "CLAUDE.md#build", "--json", env=READER).json
    assert prompt(root) == ""
    patched = run_cli(
        root,
        "patch",
        "CLAUDE.md#build",
        "--expect-rev",
        str(read["rev"]),
        "--body-file",
        "-",
        stdin="- make all\n",
        env=WRITER,
    )
    assert patched.code == 0, patched.stderr
    told = prompt(root)
    ref = f"CLAUDE.md#{read['key']}"
    assert (
        f"{ref} changed since you read it (rev {read['rev']} → {read['rev'] + 1}) by codex:xyz"
        in told
    )
    assert prompt(root) == ""  # once


def test_clines_prompt_and_post_tool_hooks_carry_the_channel(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    reader = {"MEMKEEPER_AGENT": "cline:task-1"}
    read = run_cli(root, "read", "CLAUDE.md#build", "--json", env=reader).json
    sent = run_cli(root, "send", "--to", "cline:task-1", "--text", "the build moved", env=WRITER)
    assert sent.code == 0, sent.stderr
    payload = {"hookName": "UserPromptSubmit", "taskId": "task-1", "workspaceRoots": [str(root)]}
    done = run_cli(root, "hook", "cline", "--event", "UserPromptSubmit", stdin=json.dumps(payload))
    answer = json.loads(done.stdout)
    assert answer["cancel"] is False
    assert "the build moved" in answer["contextModification"]
    patched = run_cli(
        root,
        *("patch", "CLAUDE.md#build", "--expect-rev", str(read["rev"]), "--body-file", "-"),
        stdin="- make all\n",
        env=WRITER,
    )
    assert patched.code == 0, patched.stderr
    post = {
        "hookName": "PostToolUse",
        "taskId": "task-1",
        "workspaceRoots": [str(root)],
        "postToolUse": {"toolName": "read_files", "parameters": {}, "result": "", "success": True},
    }
    done = run_cli(root, "hook", "cline", "--event", "PostToolUse", stdin=json.dumps(post))
    told = json.loads(done.stdout)["contextModification"]
    assert "changed since you read it" in told
    assert "by codex:xyz" in told
    again = run_cli(root, "hook", "cline", "--event", "PostToolUse", stdin=json.dumps(post))
    assert json.loads(again.stdout) == {"cancel": False}


def test_cursors_post_tool_hook_carries_the_channel_and_after_file_edit_keeps_it(
    tmp_path: Path,
) -> None:
    root = initialised(tmp_path / "repo")
    sent = run_cli(root, "send", "--to", "cursor:conv-1", "--text", "the build moved", env=WRITER)
    assert sent.code == 0, sent.stderr
    common = {"conversation_id": "conv-1", "workspace_roots": [str(root)], "cwd": str(root)}
    edit = {**common, "hook_event_name": "afterFileEdit", "file_path": str(root / "x.md")}
    done = run_cli(root, "hook", "cursor", stdin=json.dumps({**edit, "edits": []}))
    assert json.loads(done.stdout) == {}  # Cursor shows its model nothing of this answer
    shell = {"tool_name": "Shell", "tool_input": {"command": "ls"}}
    post = {**common, "hook_event_name": "postToolUse", **shell}
    done = run_cli(root, "hook", "cursor", stdin=json.dumps(post))
    assert "the build moved" in json.loads(done.stdout)["additional_context"]
    again = run_cli(root, "hook", "cursor", stdin=json.dumps(post))
    assert json.loads(again.stdout) == {}
