"""Cline's gate through the real ``memkeeper hook cline``: a table of pre-tool payloads in
both runners' shapes — the VS Code extension's (``hookName: "PreToolUse"``, the tool's
input as a string map) and the CLI's (``hookName: "tool_call"``, the raw input in
``tool_call``) — with the current tools (``editor``, ``apply_patch``, ``run_commands``) and
the pre-SDK ones (``write_to_file``, ``replace_in_file``, ``execute_command``), each with
its exact answer and exit code; then post-tool events indexing what changed as
``cline:TASK``.

Where the shapes come from (Cline's hook input and output, after cline/cline
@ 21cb8d2):
- VS Code: ``apps/vscode/src/sdk/hooks-adapter.ts`` ``beforeTool``/``afterTool`` (the
  ``preToolUse``/``postToolUse`` block, ``toStringRecord``), ``apps/vscode/src/core/hooks/
  hook-factory.ts`` ``completeParams`` (``clineVersion``, ``timestamp``, ``workspaceRoots``,
  ``userId``, ``model``) and ``apps/vscode/proto/cline/hooks.proto``;
- CLI: ``sdk/packages/core/src/hooks/hook-file-hooks.ts`` ``createPayloadBase``,
  ``runToolCallStart``/``runToolCallEnd`` and ``mapParams``;
- tool inputs: ``sdk/packages/core/src/extensions/tools/schemas.ts``; the pre-SDK tools:
  ``docs/features/hooks/hook-reference.mdx`` @ e884699d24^ (``write_to_file`` /
  ``.preToolUse.parameters.path``) and ``src/core/assistant-message/diff.ts`` @ 791d238996^
  (``replace_in_file``'s SEARCH/REPLACE blocks);
- answers: ``{"cancel": …, "errorMessage": …, "contextModification": …}``, exit code
  ignored when the JSON is valid (hook-factory.ts ``validateHookOutput``,
  hook-file-hooks.ts ``parseHookControl``).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.conftest import run_cli
from tests.e2e.hooktables import (
    Reasons,
    fill,
    hold_build,
    initialised,
    last_event,
    module_repo,
    rename_build_step,
)

VSCODE_TASK = "01K9Z2X7R4C1B8D3E5F6G7H8J9"
CLI_TASK = "conv_8c1d"
ALLOW = '{"cancel": false}\n'
Shape = Literal["vscode", "cli"]


def vscode(root: Path, tool: str, raw: dict[str, Any], hook: str = "PreToolUse") -> dict[str, Any]:
    """The VS Code extension's payload (cline.md §2 (A)): every parameter a string."""
    block: dict[str, Any] = {"toolName": tool, "parameters": _strings(raw)}
    if hook == "PostToolUse":
        block.update(result="File edited", success=True, executionTimeMs=41)
    return {
        "clineVersion": "4.2.0",
        "hookName": hook,
        "timestamp": "1791176775012",
        "taskId": VSCODE_TASK,
        "workspaceRoots": [str(root)],
        "userId": "c0ffee00-1111-2222-3333-444455556666",
        "model": {"provider": "unknown", "slug": "unknown"},
        "preToolUse" if hook == "PreToolUse" else "postToolUse": block,
    }


def cli_payload(
    root: Path, tool: str, raw: object, hook: str = "tool_call", **extra: Any
) -> dict[str, Any]:
    """The CLI's payload (cline.md §2 (B)): the raw input, and the string map beside it."""
    pre = hook == "tool_call"
    call: dict[str, Any] = {"id": "call_456", "name": tool, "input": raw}
    if not pre:
        call.update(output="File edited", durationMs=41, startedAt=1, endedAt=42)
    params = _strings(raw) if isinstance(raw, dict) else {}
    return {
        "clineVersion": "",
        "hookName": hook,
        "timestamp": "2026-10-05T10:00:03.789Z",
        "taskId": CLI_TASK,
        "sessionContext": {"rootSessionId": CLI_TASK},
        "workspaceRoots": [str(root)],
        "userId": "dev",
        "agent_id": "agent_1",
        "parent_agent_id": None,
        "iteration": 3,
        "tool_call" if pre else "tool_result": call,
        "preToolUse" if pre else "postToolUse": {"toolName": tool, "parameters": params},
        **extra,
    }


def _strings(raw: dict[str, Any]) -> dict[str, str]:
    """``toStringRecord`` / ``mapParams``: JSON.stringify of every non-string value."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}


def payload(shape: Shape, root: Path, tool: str, raw: dict[str, Any]) -> dict[str, Any]:
    return vscode(root, tool, raw) if shape == "vscode" else cli_payload(root, tool, raw)


def hook(root: Path, body: dict[str, Any] | str) -> tuple[int, str, str]:
    stdin = body if isinstance(body, str) else json.dumps(body)
    done = run_cli(root, "hook", "cline", stdin=stdin)
    return done.code, done.stdout, done.stderr


# -- the table -------------------------------------------------------------------------------------

SQLITE = "Use SQLite for the local cache; Postgres stays the system of record.\n"
CLAIMS_REGION = "<!-- memkeeper:generated source=claims -->\n<!-- memkeeper:end -->\n"
NEW_ENTRY = "\n## 2026-12-01 — cline\n\nKeep the cache warm on start-up.\n"


def add_file(path: str, *lines: str) -> str:
    return "\n".join(
        ["*** Begin Patch", f"*** Add File: {path}", *(f"+{x}" for x in lines), "*** End Patch"]
    )


def update_file(path: str, *lines: str) -> str:
    return "\n".join(["*** Begin Patch", f"*** Update File: {path}", "@@", *lines, "*** End Patch"])


@dataclass(frozen=True)
class Case:
    name: str
    tool: str
    raw: dict[str, Any]  # the tool's input; "{root}" in a string is the repository
    reason: str | None  # None: allowed, silently; else the deny's reason ("{agent}": the id)
    shapes: tuple[Shape, ...] = ("vscode", "cli")


def denied(reason: str) -> str:
    """Cline's cancel: the reason, and that the whole task stopped and how to go on."""
    message = (
        "memkeeper refused this tool call, and Cline stops the whole task when a hook refuses "
        f"one. {reason}\nTo go on, resume the task and do this instead, with the memkeeper "
        "commands named above; the rest of the task can go ahead as planned."
    )
    return json.dumps({"cancel": True, "errorMessage": message}, ensure_ascii=False) + "\n"


SAY = Reasons("{agent}")  # the reasons as templates: each shape is its own agent (AGENT)
CLAUDE = SAY.write_claude()
HISTORY = SAY.history()
REGION = SAY.region()
APPEND = SAY.shell_append()
SEARCH_SQLITE = f"------- SEARCH\n{SQLITE}=======\nUse Postgres for everything.\n+++++++ REPLACE\n"
CASES = [
    # -- a whole-file write of CLAUDE.md ----------------------------------------------------
    Case(
        "apply_patch adds CLAUDE.md over the existing file",
        "apply_patch",
        {"input": add_file("CLAUDE.md", "# Project memory", "", "Rewritten from scratch.")},
        CLAUDE,
    ),
    Case(
        "write_to_file of CLAUDE.md (pre-SDK)",
        "write_to_file",
        {"path": "CLAUDE.md", "content": "# Project memory\n\nRewritten from scratch.\n"},
        CLAUDE,
        ("vscode",),
    ),
    Case(
        "editor without old_text on the existing CLAUDE.md (the tool refuses it)",
        "editor",
        {"path": "{root}/CLAUDE.md", "new_text": "# Project memory\n"},
        None,
    ),
    # -- an edit of memory/decisions.md that rewrites an entry ------------------------------
    Case(
        "editor rewrites a decision",
        "editor",
        {
            "path": "{root}/memory/decisions.md",
            "old_text": "Use SQLite",
            "new_text": "Use Postgres",
        },
        HISTORY,
    ),
    Case(
        "apply_patch rewrites a decision",
        "apply_patch",
        {"input": update_file("memory/decisions.md", "-" + SQLITE[:-1], "+Use Postgres.")},
        HISTORY,
    ),
    Case(
        "replace_in_file rewrites a decision (pre-SDK)",
        "replace_in_file",
        {"path": "memory/decisions.md", "diff": SEARCH_SQLITE},
        HISTORY,
        ("vscode",),
    ),
    # -- an edit that only appends ----------------------------------------------------------
    Case(
        "editor appends a decision",
        "editor",
        {"path": "{root}/memory/decisions.md", "old_text": SQLITE, "new_text": SQLITE + NEW_ENTRY},
        None,
    ),
    Case(
        "apply_patch appends a decision",
        "apply_patch",
        {
            "input": update_file(
                "memory/decisions.md",
                " " + SQLITE[:-1],
                *("+" + line for line in NEW_ENTRY[:-1].split("\n")),
            )
        },
        None,
    ),
    Case(
        "replace_in_file appends a decision (pre-SDK)",
        "replace_in_file",
        {
            "path": "memory/decisions.md",
            "diff": f"------- SEARCH\n{SQLITE}=======\n{SQLITE}{NEW_ENTRY}+++++++ REPLACE\n",
        },
        None,
        ("vscode",),
    ),
    # -- an edit inside a generated region --------------------------------------------------
    Case(
        "editor writes inside the claims region",
        "editor",
        {
            "path": "{root}/memory/status.md",
            "old_text": CLAIMS_REGION,
            "new_text": CLAIMS_REGION.replace("-->\n", "-->\n- nobody holds a claim\n", 1),
        },
        REGION,
    ),
    # -- a shell `>>` onto the log ----------------------------------------------------------
    Case(
        "run_commands appends to the log",
        "run_commands",
        {"commands": ["echo '- more' >> memory/decisions.md"]},
        APPEND,
    ),
    Case(
        "execute_command appends to the log (pre-SDK)",
        "execute_command",
        {"command": "echo '- more' >> memory/decisions.md", "requires_approval": False},
        APPEND,
        ("vscode",),
    ),
    # -- harmless calls ---------------------------------------------------------------------
    Case(
        "editor creates an unmanaged file",
        "editor",
        {"path": "{root}/src/inventory/cache.py", "new_text": "CACHE = {}\n"},
        None,
    ),
    Case(
        "apply_patch adds an unmanaged file",
        "apply_patch",
        {"input": add_file("docs/notes.md", "# Notes")},
        None,
    ),
    Case(
        "editor edits a section of CLAUDE.md",
        "editor",
        {"path": "{root}/CLAUDE.md", "old_text": "make build", "new_text": "make wheel"},
        None,
    ),
    Case(
        "run_commands runs the tests",
        "run_commands",
        {"commands": ["make test", {"command": "git", "args": ["status"]}]},
        None,
    ),
    Case("read_files is not judged", "read_files", {"files": [{"path": "{root}/CLAUDE.md"}]}, None),
]
ROWS = [(case, shape) for case in CASES for shape in case.shapes]
AGENT = {"vscode": f"cline:{VSCODE_TASK}", "cli": f"cline:{CLI_TASK}"}


repo = module_repo("cline")


def test_the_table_covers_every_acceptance_row_in_both_runners() -> None:
    for reason in (CLAUDE, HISTORY, REGION, APPEND, None):
        assert {s for c, s in ROWS if c.reason is reason} == {"vscode", "cli"}
    tools = {c.tool for c in CASES}
    assert {"editor", "apply_patch", "run_commands"} <= tools
    assert {"write_to_file", "replace_in_file", "execute_command"} <= tools


@pytest.mark.parametrize(("case", "shape"), ROWS, ids=[f"{c.name} [{s}]" for c, s in ROWS])
def test_each_call_gets_its_exact_answer(repo: Path, case: Case, shape: Shape) -> None:
    before = {p: p.read_bytes() for p in repo.rglob("*.md")}
    got = hook(repo, payload(shape, repo, case.tool, fill(case.raw, repo)))
    if case.reason is None:
        assert got == (0, ALLOW, "")
    else:
        assert got == (0, denied(case.reason.replace("{agent}", AGENT[shape])), "")
    assert {p: p.read_bytes() for p in repo.rglob("*.md")} == before  # the gate only reads


# -- an advisory claim: allowed, with a notice for the model -----------------------------------


def test_an_advisory_claim_is_a_wait_in_the_models_next_turn(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    hold_build(root, "agent-a", "--ttl", "600")
    raw = {"path": str(root / "CLAUDE.md"), "old_text": "make build", "new_text": "make wheel"}
    for body in (vscode(root, "editor", raw), cli_payload(root, "editor", raw)):
        code, out, err = hook(root, body)
        assert (code, err) == (0, "")
        answer = json.loads(out)
        assert set(answer) == {"cancel", "contextModification"}
        assert answer["cancel"] is False
        assert answer["contextModification"].startswith(
            "WAIT: agent-a holds an advisory write claim"
        ), answer


# -- what memkeeper cannot read: allowed, and said on stderr -------------------------------------

CANNOT_READ = "memkeeper hook cline: cannot read the hook input ({}); allowed\n"


def test_a_malformed_payload_is_allowed_with_the_reason_on_stderr(repo: Path) -> None:
    broken = vscode(repo, "editor", {})
    broken["preToolUse"]["parameters"] = "path=CLAUDE.md"
    assert hook(repo, broken) == (
        0,
        ALLOW,
        CANNOT_READ.format("payload.preToolUse.parameters is not an object"),
    )
    numbers = cli_payload(repo, "run_commands", {"commands": [3]})
    assert hook(repo, numbers) == (
        0,
        ALLOW,
        CANNOT_READ.format("run_commands: the input is neither a command nor a list of them"),
    )
    patch = cli_payload(
        repo, "apply_patch", {"input": "*** Begin Patch\n*** Add File: CLAUDE.md\n"}
    )
    assert hook(repo, patch) == (
        0,
        ALLOW,
        CANNOT_READ.format("apply_patch: no '*** End Patch' line"),
    )


def test_stdin_that_is_not_json_is_allowed_with_the_reason_on_stderr(repo: Path) -> None:
    assert hook(repo, "PreToolUse editor CLAUDE.md") == (
        0,
        ALLOW,
        CANNOT_READ.format("not JSON: Expecting value: line 1 column 1 (char 0)"),
    )


def test_other_events_are_answered_with_the_allow(repo: Path) -> None:
    start = {"clineVersion": "4.2.0", "hookName": "TaskCancel", "taskId": VSCODE_TASK}
    assert hook(repo, {**start, "taskCancel": {"taskMetadata": {"taskId": VSCODE_TASK}}}) == (
        0,
        ALLOW,
        "",
    )


# -- post-tool events: the change indexed as the task's agent -----------------------------------


def test_a_post_tool_event_indexes_the_change_as_the_vscode_task(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    claude = rename_build_step(root)  # the tool ran
    raw = {"path": str(claude), "old_text": "make build", "new_text": "make wheel"}
    assert hook(root, vscode(root, "editor", raw, "PostToolUse")) == (0, ALLOW, "")
    event = last_event(root)
    assert (event["type"], event["actor"], event["path"]) == (
        "section.external_edit",
        f"cline:{VSCODE_TASK}",
        "CLAUDE.md",
    )
    assert (event["data"]["tool"], event["data"]["tool_use_id"]) == ("Edit", "")


def test_a_post_tool_event_indexes_the_change_as_the_cli_sub_agent(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    claude = root / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("make test", "make check"))
    patch = update_file(
        "CLAUDE.md",
        "-- Run `make test` before every commit.",
        "+- Run `make check` before every commit.",
    )
    body = cli_payload(
        root,
        "apply_patch",
        {"input": patch},
        "tool_result",
        agent_id="agent_2",
        parent_agent_id="agent_1",
    )
    assert hook(root, body) == (0, ALLOW, "")
    event = last_event(root)
    assert (event["type"], event["actor"], event["path"]) == (
        "section.external_edit",
        f"cline:{CLI_TASK}/agent_2",
        "CLAUDE.md",
    )
    assert event["data"]["tool_use_id"] == "call_456"


def test_a_post_tool_shell_command_indexes_the_file_it_wrote(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    claude = root / "CLAUDE.md"
    command = "sed -i 's/make build/make wheel/' CLAUDE.md"
    subprocess.run(command, shell=True, cwd=root, check=True)
    body = cli_payload(root, "run_commands", {"commands": [command]}, "tool_result")
    assert hook(root, body) == (0, ALLOW, "")
    event = last_event(root)
    assert (event["type"], event["actor"], event["data"]["tool"]) == (
        "section.external_edit",
        f"cline:{CLI_TASK}",
        "Bash",
    )
    assert "make wheel" in claude.read_text()
