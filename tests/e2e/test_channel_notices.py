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
