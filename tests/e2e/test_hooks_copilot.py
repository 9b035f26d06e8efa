"""GitHub Copilot's gate through the real ``memkeeper hook copilot``: a table of payloads in
Copilot's documented shapes, each with the exact answer and exit code Copilot reads.

Shapes (Copilot's documented hook input JSON and its example inputs):
- camelCase ``{sessionId, timestamp, cwd, toolName, toolArgs}``, the event on argv (the
  installed ``--event preToolUse``): github/docs ``content/copilot/reference/hooks-reference.md``
  "preToolUse / PreToolUse" @ 05da5bc3c1401734f1197ba6a620e2ed4f1b30e1;
- ``create {path, file_text}`` and ``edit {path, old_str, new_str}`` with ``toolArgs`` a JSON
  *string*, as CLI 1.0.63 sent them: pbakaus/impeccable
  ``.claude/skills/impeccable/scripts/hook-lib.mjs`` @ 56f44523f76efdcec813e67b38ee550e49b16f48,
  github/copilot-cli#3349; the argument names from github/copilot-sdk
  ``test/snapshots/builtin_tools/should_create_a_new_file.yaml`` and
  ``should_edit_a_file_successfully.yaml`` @ cc0438d66e3e68c333537cb935d9425d4e4ed8d5;
- ``bash {command, description, mode, initial_wait}`` with ``toolArgs`` an object, and
  ``postToolUse``'s ``toolResult``: forgeprint/forgelore
  ``testdata/agents/copilot-cli/1.0.91/postToolUse-1.json``
  @ 4f418c6c5d54d08d1dfdbafa4411d2cd25cc50d4;
- ``apply_patch`` with the raw patch as ``toolArgs`` (GPT models): hook-lib.mjs as above;
- PascalCase ``{hook_event_name, session_id, timestamp (ISO), cwd, tool_name, tool_input}``
  with Claude's tool names (what Copilot sends to ``.claude/settings.json`` hooks):
  hooks-reference.md "VS Code compatible input" and "Claude-format matchers".

Answers (copilot.md §3): deny ``{"permissionDecision": "deny", "permissionDecisionReason":
…}``; allow ``{}``; always exit 0 — Copilot denies a call whose hook exits non-zero (§4, §5).
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

SESSION = "2c5b65f5-bb1d-4479-826e-c9cdacac321b"
AGENT = f"copilot:{SESSION}"
PRE = ("hook", "copilot", "--event", "preToolUse")
POST = ("hook", "copilot", "--event", "postToolUse")
ENTRY = "Use SQLite for the local cache; Postgres stays the system of record.\n"
NEW_ENTRY = "\n## 2026-11-03 — copilot\n\nKeep the cache warm between deploys.\n"
REGION = "<!-- memkeeper:generated source=claims -->\n"


def camel(tool: str, args: object, **extra: Any) -> dict[str, Any]:
    return {
        "sessionId": SESSION,
        "timestamp": 1791176774359,
        "cwd": "{root}",
        "toolName": tool,
        "toolArgs": args,
        **extra,
    }


def as_string(args: dict[str, Any]) -> str:
    """``toolArgs`` as the JSON string Copilot's file tools send."""
    return json.dumps(args)


def pascal(tool: str, args: object) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": SESSION,
        "timestamp": "2026-10-05T10:00:01.123Z",
        "cwd": "{root}",
        "tool_name": tool,
        "tool_input": args,
    }


def deny(reason: str) -> str:
    return json.dumps({"permissionDecision": "deny", "permissionDecisionReason": reason}) + "\n"


ALLOW = "{}\n"
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
    argv: tuple[str, ...] = PRE
    stderr: str = ""
    code: int = 0


ROWS = [
    Row(
        "create: a whole-file write of CLAUDE.md",
        camel("create", as_string({"path": "{root}/CLAUDE.md", "file_text": "# Memory\n"})),
        WRITE_CLAUDE,
    ),
    Row(
        "edit: rewriting a decision",
        camel(
            "edit",
            as_string(
                {
                    "path": "{root}/memory/decisions.md",
                    "old_str": ENTRY,
                    "new_str": "Use Postgres for the local cache too.\n",
                }
            ),
        ),
        REWRITE_ENTRY,
    ),
    Row(
        "edit: only appending a decision",
        camel(
            "edit",
            as_string(
                {
                    "path": "{root}/memory/decisions.md",
                    "old_str": ENTRY,
                    "new_str": ENTRY + NEW_ENTRY,
                }
            ),
        ),
        ALLOW,
    ),
    Row(
        "edit: inside a generated region",
        camel(
            "edit",
            as_string(
                {
                    "path": "{root}/memory/status.md",
                    "old_str": REGION,
                    "new_str": REGION + "- nobody holds anything\n",
                }
            ),
        ),
        IN_REGION,
    ),
    Row(
        "bash: >> onto the decision log",
        camel(
            "bash",
            {
                "command": "echo x >> memory/decisions.md",
                "description": "Append to the decisions log",
                "mode": "sync",
                "initial_wait": 30,
            },
        ),
        SHELL_APPEND,
    ),
    Row(
        "create: a harmless file",
        camel("create", as_string({"path": "{root}/src/inventory/cache.py", "file_text": "x\n"})),
        ALLOW,
    ),
    Row(
        "apply_patch: deleting the decision log",
        camel(
            "apply_patch", "*** Begin Patch\n*** Delete File: memory/decisions.md\n*** End Patch\n"
        ),
        DELETE_HISTORY,
    ),
    Row(
        "apply_patch: adding over CLAUDE.md, beside a harmless file",
        camel(
            "apply_patch",
            "*** Begin Patch\n*** Add File: src/notes.txt\n+hi\n"
            "*** Add File: {root}/CLAUDE.md\n+# Memory\n*** End Patch\n",
        ),
        WRITE_CLAUDE,
    ),
    Row(
        "PascalCase Write with Copilot's own arguments, no --event",
        pascal("Write", {"path": "{root}/CLAUDE.md", "file_text": "# Memory\n"}),
        WRITE_CLAUDE,
        argv=("hook", "copilot"),
    ),
    Row(
        "PascalCase Bash",
        pascal("Bash", {"command": "echo x >> memory/decisions.md"}),
        SHELL_APPEND,
        argv=("hook", "copilot"),
    ),
    Row(
        "malformed: not JSON",
        b"{this is not json",
        ALLOW,
        stderr="memkeeper hook copilot: cannot read the hook input (not JSON: Expecting property "
        "name enclosed in double quotes: line 1 column 2 (char 1)); allowed\n",
    ),
    Row(
        "malformed: toolArgs neither JSON nor a patch",
        camel("create", "{path: CLAUDE.md"),
        ALLOW,
        stderr="memkeeper hook copilot: cannot read the hook input (create: the arguments are "
        "neither JSON nor a patch); allowed\n",
    ),
    Row(
        "malformed: a broken patch",
        camel("apply_patch", "*** Begin Patch\n*** Add File: CLAUDE.md\n+x\n"),
        ALLOW,
        stderr="memkeeper hook copilot: cannot read the hook input (apply_patch: no "
        "'*** End Patch' line); allowed\n",
    ),
    Row(
        "a tool the gate does not judge",
        camel("view", as_string({"path": "{root}/CLAUDE.md"})),
        ALLOW,
    ),
    Row(
        "a post-tool event answers nothing to decide",
        camel("create", as_string({"path": "{root}/CLAUDE.md", "file_text": "# Memory\n"})),
        ALLOW,
        argv=POST,
    ),
]


def body(payload: dict[str, Any] | bytes, root: Path) -> bytes:
    return payload if isinstance(payload, bytes) else json.dumps(fill(payload, root)).encode()


repo = module_repo("copilot")


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_payload_gets_copilots_exact_answer(repo: Path, row: Row) -> None:
    done = run_cli(repo, *row.argv, stdin=body(row.payload, repo))
    assert (done.stdout, done.stderr, done.code) == (row.stdout, row.stderr, row.code)


def test_the_table_covers_the_acceptance_cases() -> None:
    answers = {r.stdout for r in ROWS}
    assert {WRITE_CLAUDE, REWRITE_ENTRY, IN_REGION, SHELL_APPEND, ALLOW} <= answers
    assert sum(isinstance(r.payload, bytes) or bool(r.stderr) for r in ROWS) >= 2


# -- Copilot's payloads reach memkeeper through .claude/settings.json too -----------------------


@pytest.mark.parametrize(
    "row",
    [ROWS[0], ROWS[4], ROWS[8], ROWS[9]],
    ids=["camelCase create", "camelCase bash", "PascalCase Write", "PascalCase Bash"],
)
def test_copilot_payloads_sent_to_the_claude_code_hook_get_copilots_answer(
    repo: Path, row: Row
) -> None:
    done = run_cli(repo, "hook", "claude-code", stdin=body(row.payload, repo))
    assert (done.stdout, done.stderr, done.code) == (row.stdout, "", 0)


# -- post-tool: the change is indexed as copilot:SESSION ---------------------------------------


def test_post_tool_use_indexes_the_change_as_the_copilot_session(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    decisions = root / "memory/decisions.md"
    decisions.write_text(decisions.read_text() + NEW_ENTRY)  # what the allowed edit did
    edit = {"path": str(decisions), "old_str": ENTRY, "new_str": ENTRY + NEW_ENTRY}
    result = {"resultType": "success", "textResultForLlm": "File edited."}
    payload = fill(camel("edit", as_string(edit), toolResult=result), root)
    before = len(events(root))
    done = run_cli(root, *POST, stdin=json.dumps(payload))
    assert (done.stdout, done.stderr, done.code) == (ALLOW, "", 0)
    new = events(root)[before:]
    assert [(e["type"], e["actor"], e["path"], e["data"]["tool"]) for e in new] == [
        ("section.external_edit", AGENT, "memory/decisions.md", "Edit"),
        ("entry.appended", AGENT, "memory/decisions.md", "Edit"),
    ]
    assert new[-1]["section"] == "decision-log/2026-11-03-copilot"


def test_post_tool_use_after_bash_indexes_what_the_command_wrote(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    arch = root / "memory/architecture.md"
    arch.write_text(arch.read_text() + "More.\n")
    result = {
        "resultType": "success",
        "textResultForLlm": "\n<shellId: 0 completed with exit code 0>",
    }
    bash = camel("bash", {"command": "echo More. >> memory/architecture.md"}, toolResult=result)
    done = run_cli(root, "hook", "copilot", stdin=json.dumps(fill(bash, root)))  # no --event
    assert (done.stdout, done.stderr, done.code) == (ALLOW, "", 0)
    last = events(root)[-1]
    assert (last["actor"], last["path"], last["data"]["tool"]) == (
        AGENT,
        "memory/architecture.md",
        "Bash",
    )


# -- Copilot fails closed, so memkeeper's own failures must still answer {} with exit 0 ---------


def test_a_failure_of_the_gate_answers_the_allow_with_exit_0(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    (root / ".memkeeper.yaml").write_text("version: 1\nfiles: [{path: x, class: nonsense}]\n")
    done = run_cli(root, *PRE, stdin=body(ROWS[0].payload, root))
    assert_allowed_because(done, "copilot", ALLOW, "the gate failed (")
    assert ".memkeeper.yaml" in done.stderr
