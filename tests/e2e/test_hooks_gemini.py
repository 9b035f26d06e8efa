"""``memkeeper hook gemini`` end to end: a table of Gemini CLI payloads through the real
command, each with the exact stdout and exit code Gemini reads, and an AfterTool event that
indexes the change as ``gemini:SESSION``.

Every payload has the shape Gemini CLI documents for its hooks: the base fields
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``) of
google-gemini/gemini-cli ``packages/core/src/hooks/types.ts`` ``HookInput`` and
``hookEventHandler.ts`` ``createBaseInput``; ``tool_input`` the tool's own parameters
(``write_file {file_path, content}``, ``replace {file_path, instruction, old_string,
new_string}``, ``run_shell_command {command, description, dir_path}``:
``tools/definitions/base-declarations.ts``), all @ 5411f113; AfterTool's ``tool_response``
``{llmContent, returnDisplay}`` (``coreToolHookTriggers.ts``). The answers are §3's and
``docs/hooks/reference.md``'s: ``{"decision": "deny", "reason": …}``, else ``{}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, tree_bytes
from tests.e2e.hooktables import (
    Reasons,
    assert_allowed_because,
    fill,
    hold_build,
    initialised,
    last_event,
    module_repo,
    rename_build_step,
)

SESSION = "51124319-e155-440c-b950-09aeb2ea488f"
AGENT = f"gemini:{SESSION}"
ALLOW = "{}\n"


def payload(root: Path, tool: str, tool_input: object, event: str = "BeforeTool") -> str:
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": f"/home/dev/.gemini/tmp/3f2a/chats/session-{SESSION}.jsonl",
            "cwd": str(root),
            "hook_event_name": event,
            "timestamp": "2026-10-05T10:00:01.123Z",
            "tool_name": tool,
            "tool_input": tool_input,
        }
    )


def deny(reason: str) -> str:
    return json.dumps({"decision": "deny", "reason": reason}) + "\n"


SAY = Reasons(AGENT)
WRITE_CLAUDE = SAY.write_claude()
HISTORY = SAY.history()
REGION = SAY.region()
SHELL_APPEND = SAY.shell_append()
OWNED = SAY.owned("Gemini CLI")

LAST_DECISION = "Use SQLite for the local cache; Postgres stays the system of record.\n"


def replace(path: str, old: str, new: str) -> dict[str, Any]:
    return {"file_path": path, "instruction": "Update it", "old_string": old, "new_string": new}


@dataclass(frozen=True)
class Row:
    name: str
    tool: str
    tool_input: object
    stdout: str  # exactly


ROWS = [
    Row(
        "write_file: whole-file write of CLAUDE.md",
        "write_file",
        {"file_path": "{root}/CLAUDE.md", "content": "# Project memory\n\nRewritten.\n"},
        deny(WRITE_CLAUDE),
    ),
    Row(
        "replace: rewrite a decision",
        "replace",
        replace("memory/decisions.md", LAST_DECISION, "Use Postgres for the local cache.\n"),
        deny(HISTORY),
    ),
    Row(
        "replace: append a decision",
        "replace",
        replace(
            "memory/decisions.md",
            LAST_DECISION,
            LAST_DECISION + "\n## 2026-12-01 — gemini\n\nCache reads for 30 s.\n",
        ),
        ALLOW,
    ),
    Row(
        "replace: inside a generated region",
        "replace",
        replace(
            "memory/status.md",
            "<!-- memkeeper:generated source=claims -->\n",
            "<!-- memkeeper:generated source=claims -->\n- nobody holds anything\n",
        ),
        deny(REGION),
    ),
    Row(
        "replace: outside the generated regions",
        "replace",
        replace("memory/status.md", "applies to this service too.", "applies here too."),
        ALLOW,
    ),
    Row(
        "replace: a section of CLAUDE.md",
        "replace",
        replace("CLAUDE.md", "`make build` produces", "`make wheel` produces"),
        ALLOW,
    ),
    Row(
        "replace: a section only humans own",
        "replace",
        replace("CLAUDE.md", "Only humans cut releases.", "Anyone may cut a release."),
        deny(OWNED),
    ),
    Row(
        "replace: an empty old string creates a memory file",
        "replace",
        replace("memory/glossary.md", "", "# Glossary\n"),
        ALLOW,
    ),
    Row(
        "run_shell_command: >> onto the log",
        "run_shell_command",
        {"command": "echo x >> memory/decisions.md", "description": "Append to the decisions log"},
        deny(SHELL_APPEND),
    ),
    Row(
        "run_shell_command: >> from dir_path",
        "run_shell_command",
        {"command": "echo x >> decisions.md", "description": "Append", "dir_path": "memory"},
        deny(SHELL_APPEND),
    ),
    Row(
        "run_shell_command: harmless",
        "run_shell_command",
        {"command": "git status && ls memory", "description": "Look around"},
        ALLOW,
    ),
    Row(
        "write_file: a harmless file",
        "write_file",
        {"file_path": "src/inventory/cache.py", "content": "TTL = 30\n"},
        ALLOW,
    ),
    Row("read_file: not judged", "read_file", {"file_path": "CLAUDE.md"}, ALLOW),
]


repo = module_repo("gemini")


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_gemini_call_gets_its_exact_answer(repo: Path, row: Row) -> None:
    stdin = payload(repo, row.tool, fill(row.tool_input, repo))
    before = tree_bytes(repo)
    done = run_cli(repo, "hook", "gemini", stdin=stdin)
    assert (done.code, done.stdout, done.stderr) == (0, row.stdout, "")
    assert tree_bytes(repo) == before  # the gate changed nothing it judged


@pytest.mark.parametrize(
    ("stdin", "says"),
    [
        ("{not json", "not JSON"),
        (
            json.dumps(
                {"hook_event_name": "BeforeTool", "tool_name": "write_file", "tool_input": {}}
            ),
            "tool_input.file_path is missing",
        ),
    ],
)
def test_a_malformed_payload_is_allowed_with_the_reason_on_stderr(
    repo: Path, stdin: str, says: str
) -> None:
    done = run_cli(repo, "hook", "gemini", stdin=stdin)
    why = f"cannot read the hook input ({says}"
    assert_allowed_because(done, "gemini", ALLOW, why)  # JSON on stdout: Gemini reads no stderr


def test_an_advisory_claim_is_a_notice_for_the_user(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    hold_build(root, "claude-code:s9")
    body = replace("CLAUDE.md", "`make build` produces", "`make wheel` produces")
    done = run_cli(root, "hook", "gemini", stdin=payload(root, "replace", body))
    assert (done.code, done.stderr) == (0, "")
    out = json.loads(done.stdout)
    assert list(out) == ["systemMessage"]
    assert out["systemMessage"].startswith("WAIT: claude-code:s9 holds an advisory write claim")
    assert done.stdout == json.dumps(out) + "\n"


def test_after_tool_indexes_the_change_as_the_gemini_session(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    claude = rename_build_step(root)  # what it did
    body = json.loads(
        payload(
            root,
            "replace",
            replace("CLAUDE.md", "`make build` produces", "`make wheel` produces"),
            "AfterTool",
        )
    )
    body["tool_response"] = {
        "llmContent": f"Successfully modified file: {claude} (1 replacements).",
        "returnDisplay": {"fileName": "CLAUDE.md", "filePath": str(claude), "isNewFile": False},
    }
    done = run_cli(root, "hook", "gemini", stdin=json.dumps(body))
    assert (done.code, done.stdout, done.stderr) == (0, ALLOW, "")
    last = last_event(root)
    assert (last["type"], last["actor"], last["path"], last["section"]) == (
        "section.external_edit",
        AGENT,
        "CLAUDE.md",
        "inventory-service/build",
    )
    assert last["data"]["tool"] == "Edit"


def test_after_tool_of_a_shell_command_in_dir_path(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    notes = root / "memory" / "architecture.md"
    notes.write_text(notes.read_text() + "\nOne more line.\n")
    tool_input = {"command": "echo One more line. >> architecture.md", "dir_path": "memory"}
    body = json.loads(payload(root, "run_shell_command", tool_input, "AfterTool"))
    body["tool_response"] = {"llmContent": "Output: (empty)", "returnDisplay": ""}
    done = run_cli(root, "hook", "gemini", stdin=json.dumps(body))
    assert (done.code, done.stdout, done.stderr) == (0, ALLOW, "")
    last = last_event(root)
    assert (last["actor"], last["path"], last["data"]["tool"]) == (
        AGENT,
        "memory/architecture.md",
        "Bash",
    )
