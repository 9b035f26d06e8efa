"""Cursor's gate through the real ``memkeeper hook cursor``: a table of payloads in Cursor's
documented shapes, each with the exact answer and exit code Cursor reads.

Shapes (Cursor's documented hook input JSON and its example inputs):
- the common fields, ``preToolUse {tool_name, tool_input, tool_use_id}``,
  ``beforeShellExecution {command, cwd, sandbox}`` and ``afterFileEdit {file_path, edits}``:
  cursor.com/docs/hooks, read through mehmetbaykar/cursor-docs-skill
  ``skills/cursor-docs/references/hooks.md`` @ 1cc1c9939974c911b50b2e71fbe4b0b742c8b58c;
- ``session_id``, ``cwd`` and ``Shell {command, cwd, timeout}``: a cursor-agent 2026.10.01
  capture, forgeprint/forgelore ``testdata/agents/cursor/2026.10.01/postToolUse-1.json``
  @ b186dcafb1360cc9cb342083da319dcfc508711a;
- ``Write``'s arguments, which Cursor does not document: ``{path, contents}`` from
  Cygnux-Labs/Tracekit ``tests/data/harness/cursor.json``
  @ 083c6ed8fde0c0f0bf6c03717b2992ce8acedc28,
  ``{file_path, content}`` from Tracekit's v1.4.2 notes, an edit as ``old_string``/``new_string``
  under ``Write`` from cursor.com/docs/reference/third-party-hooks "Tool Name Mapping"
  (same mirror, ``reference__third-party-hooks.md`` @ 58b218a294fd76002e32fe0c649b8e05773f6dd4);
- no ``tool_name``: deftai/directive#2628 and #2669; a UTF-8 BOM and ``cwd: ""``:
  DobermanCore/Doberman-Core#576.

Answers (cursor.md §3): ``{"permission": "deny", "user_message": …, "agent_message": …}`` or
``{"permission": "allow"}`` — always JSON (plain text has blocked writes, bkit-claude-code#118)
— and ``{}`` after a tool; always exit 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.e2e.hooktables import (
    Reasons,
    assert_allowed_because,
    events,
    fill,
    initialised,
    module_repo,
)

SESSION = "fc749b53-5672-41fa-87c7-c579c337199d"
AGENT = f"cursor:{SESSION}"
HOOK = ("hook", "cursor")
ENTRY = "Use SQLite for the local cache; Postgres stays the system of record.\n"
NEW_ENTRY = "\n## 2026-11-03 — cursor\n\nKeep the cache warm between deploys.\n"
REGION = "<!-- memkeeper:generated source=claims -->\n"


def common(event: str, **fields: Any) -> dict[str, Any]:
    return {
        "conversation_id": SESSION,
        "generation_id": "0b1e2c3d-0000-4000-8000-000000000001",
        "model": "default",
        "hook_event_name": event,
        "cursor_version": "2026.10.01-e373342",
        "workspace_roots": ["{root}"],
        "user_email": "dev@example.com",
        "transcript_path": None,
        "session_id": SESSION,
        "cwd": "{root}",
        **fields,
    }


def tool(name: str, args: object, event: str = "preToolUse") -> dict[str, Any]:
    use_id = "73da88f4-bc52-4b85-bdbe-34de8fa9c3e8"
    return common(event, tool_name=name, tool_use_id=use_id, tool_input=args)


def deny(reason: str) -> str:
    out = {"permission": "deny", "user_message": f"memkeeper: {reason}", "agent_message": reason}
    return json.dumps(out, ensure_ascii=False) + "\n"


ALLOW = '{"permission": "allow"}\n'
AFTER = "{}\n"
SAY = Reasons(AGENT)
WRITE_CLAUDE = deny(SAY.write_claude())
REWRITE_ENTRY = deny(SAY.history())
IN_REGION = deny(SAY.region())
SHELL_APPEND = deny(SAY.shell_append())
DELETE_HISTORY = deny(SAY.delete_history())


@dataclass(frozen=True)
class Row:
    name: str
    payload: dict[str, Any] | bytes
    stdout: str
    stderr: str = ""
    code: int = 0
    bom: bool = False


def no_tool_name(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "tool_name"}


ROWS = [
    Row(
        "Write {file_path, content}: a whole-file write of CLAUDE.md",
        tool("Write", {"file_path": "{root}/CLAUDE.md", "content": "# Memory\n"}),
        WRITE_CLAUDE,
    ),
    Row(
        "Write {path, contents}: the same",
        tool("Write", {"path": "{root}/CLAUDE.md", "contents": "# Memory\n"}),
        WRITE_CLAUDE,
    ),
    Row(
        "Write as an edit: rewriting a decision",
        tool(
            "Write",
            {
                "path": "{root}/memory/decisions.md",
                "old_string": ENTRY,
                "new_string": "Use Postgres for the local cache too.\n",
            },
        ),
        REWRITE_ENTRY,
    ),
    Row(
        "Write as an edit: only appending a decision",
        tool(
            "Write",
            {
                "path": "{root}/memory/decisions.md",
                "old_string": ENTRY,
                "new_string": ENTRY + NEW_ENTRY,
            },
        ),
        ALLOW,
    ),
    Row(
        "Write as an edit: inside a generated region",
        tool(
            "Write",
            {
                "file_path": "{root}/memory/status.md",
                "old_string": REGION,
                "new_string": REGION + "- nobody holds anything\n",
            },
        ),
        IN_REGION,
    ),
    Row(
        "Shell: >> onto the decision log",
        tool(
            "Shell", {"command": "echo x >> memory/decisions.md", "cwd": "{root}", "timeout": 30000}
        ),
        SHELL_APPEND,
    ),
    Row(
        "beforeShellExecution: >> onto the decision log",
        common("beforeShellExecution", command="echo x >> memory/decisions.md", sandbox=False),
        SHELL_APPEND,
    ),
    Row(
        "Shell {working_directory}: a relative path from a subdirectory",
        tool("Shell", {"command": "echo x >> decisions.md", "working_directory": "{root}/memory"}),
        deny(SAY.shell_append("decisions.md")),  # the log as the command's directory sees it
    ),
    Row(
        "Delete: the decision log",
        tool("Delete", {"path": "{root}/memory/decisions.md"}),
        DELETE_HISTORY,
    ),
    Row(
        "Write: a harmless file",
        tool("Write", {"file_path": "{root}/src/inventory/cache.py", "content": "x\n"}),
        ALLOW,
    ),
    Row(
        "no tool_name, a BOM and an empty cwd",
        no_tool_name({**tool("Write", {"path": "CLAUDE.md", "contents": "# Memory\n"}), "cwd": ""}),
        WRITE_CLAUDE,
        bom=True,
    ),
    Row(
        "malformed: not JSON",
        b"{this is not json",
        ALLOW,
        stderr="memkeeper hook cursor: cannot read the hook input (not JSON: Expecting property "
        "name enclosed in double quotes: line 1 column 2 (char 1)); allowed\n",
    ),
    Row(
        "malformed: a Write with no content",
        tool("Write", {"path": "{root}/CLAUDE.md"}),
        ALLOW,
        stderr="memkeeper hook cursor: cannot read the hook input (Write: neither a content "
        "(content, contents, text), an old_string nor edits); allowed\n",
    ),
    Row("a tool the gate does not judge", tool("Read", {"file_path": "{root}/CLAUDE.md"}), ALLOW),
    Row(
        "postToolUse answers nothing to decide",
        tool("Write", {"file_path": "{root}/CLAUDE.md", "content": "# Memory\n"}, "postToolUse"),
        AFTER,
    ),
    Row("an event that is not about a tool", common("stop"), ALLOW),
]


def body(row: Row, root: Path) -> bytes:
    if isinstance(row.payload, bytes):
        return row.payload
    raw = json.dumps(fill(row.payload, root), ensure_ascii=False).encode()
    return b"\xef\xbb\xbf" + raw if row.bom else raw


repo = module_repo("cursor")


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_payload_gets_cursors_exact_answer(repo: Path, row: Row) -> None:
    done = run_cli(repo, *HOOK, stdin=body(row, repo))
    assert (done.stdout, done.stderr, done.code) == (row.stdout, row.stderr, row.code)


def test_the_table_covers_the_acceptance_cases() -> None:
    answers = {r.stdout for r in ROWS}
    assert {WRITE_CLAUDE, REWRITE_ENTRY, IN_REGION, SHELL_APPEND, ALLOW, AFTER} <= answers
    assert sum(isinstance(r.payload, bytes) or bool(r.stderr) for r in ROWS) >= 2


# -- Cursor runs the hooks of .claude/settings.json too, with its own payloads -----------------

CROSS = [r for r in ROWS if r.name.startswith(("Write {", "Shell: ", "beforeShell", "no tool"))]


@pytest.mark.parametrize("row", CROSS, ids=[r.name for r in CROSS])
def test_cursor_payloads_sent_to_the_claude_code_hook_get_cursors_answer(
    repo: Path, row: Row
) -> None:
    done = run_cli(repo, "hook", "claude-code", stdin=body(row, repo))
    assert (done.stdout, done.stderr, done.code) == (row.stdout, "", 0)


# -- after a tool: the change is indexed as cursor:SESSION -------------------------------------


def test_after_file_edit_indexes_the_change_as_the_cursor_session(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    decisions = root / "memory/decisions.md"
    decisions.write_text(decisions.read_text() + NEW_ENTRY)  # what the allowed edit did
    edits = [{"old_string": ENTRY, "new_string": ENTRY + NEW_ENTRY}]
    payload = common("afterFileEdit", file_path=str(decisions), edits=edits)
    before = len(events(root))
    done = run_cli(root, *HOOK, stdin=json.dumps(fill(payload, root)))
    assert (done.stdout, done.stderr, done.code) == (AFTER, "", 0)
    new = events(root)[before:]
    assert [(e["type"], e["actor"], e["path"], e["data"]["tool"]) for e in new] == [
        ("section.external_edit", AGENT, "memory/decisions.md", "Edit"),
        ("entry.appended", AGENT, "memory/decisions.md", "Edit"),
    ]
    assert new[-1]["section"] == "decision-log/2026-11-03-cursor"


def test_post_tool_use_after_shell_indexes_what_the_command_wrote(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    arch = root / "memory/architecture.md"
    arch.write_text(arch.read_text() + "More.\n")
    shell = tool(
        "Shell", {"command": "echo More. >> memory/architecture.md", "cwd": "{root}"}, "postToolUse"
    )
    shell.update(tool_output='{"output":"","exitCode":0}', duration=12)
    done = run_cli(root, *HOOK, stdin=json.dumps(fill(shell, root)))
    assert (done.stdout, done.stderr, done.code) == (AFTER, "", 0)
    last = events(root)[-1]
    assert (last["actor"], last["path"], last["data"]["tool"], last["data"]["tool_use_id"]) == (
        AGENT,
        "memory/architecture.md",
        "Bash",
        "73da88f4-bc52-4b85-bdbe-34de8fa9c3e8",
    )


def test_a_failure_of_the_gate_still_answers_json_with_exit_0(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    (root / ".memkeeper.yaml").write_text("version: 1\nfiles: [{path: x, class: nonsense}]\n")
    done = run_cli(root, *HOOK, stdin=body(ROWS[0], root))
    assert_allowed_because(done, "cursor", ALLOW, "the gate failed (")
