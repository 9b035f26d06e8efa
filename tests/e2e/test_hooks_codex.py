"""``memkeeper hook codex`` end to end: a table of Codex payloads through the real command,
each with the exact stdout and exit code Codex reads, and a PostToolUse that indexes the
change as ``codex:SESSION``.

Every payload has the shape Codex documents for its hooks: the common fields
(``session_id``, ``turn_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``model``,
``permission_mode``) of openai/codex ``codex-rs/hooks/src/events/pre_tool_use.rs``
``command_input_json`` @ 0082977c; ``apply_patch`` with the raw patch in
``tool_input.command`` (PR #18391, ``apply_patch_tests.rs``
``pre_tool_use_payload_uses_freeform_patch_input``), in the grammar of
``tool_apply_patch.lark`` @ 71163530; shell tools as ``Bash {command}``, the argv tool's
joined as ``bash -lc '…'`` (``shell_payload_command``); PostToolUse's ``tool_response`` the
tool's output string (``post_tool_use_payload_uses_patch_input_and_tool_output``). The
answers are §3's: the deny object, and nothing at all for an allow.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import MEMKEEPER, run_cli, tree_bytes
from tests.e2e.hooktables import (
    Reasons,
    assert_allowed_because,
    hold_build,
    initialised,
    last_event,
    module_repo,
    rename_build_step,
)

SESSION = "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b"
AGENT = f"codex:{SESSION}"


def payload(root: Path, tool: str, tool_input: object, event: str = "PreToolUse") -> str:
    return json.dumps(
        {
            "session_id": SESSION,
            "turn_id": "019a2b3c-5555-7000-8000-000000000001",
            "transcript_path": "/home/dev/.codex/sessions/2026/10/05/rollout-019a2b3c.jsonl",
            "cwd": str(root),
            "hook_event_name": event,
            "model": "gpt-5.5-codex",
            "permission_mode": "default",
            "tool_name": tool,
            "tool_use_id": "call_9f2a1c",
            "tool_input": tool_input,
        }
    )


def patch(*body: str) -> dict[str, str]:
    return {"command": "*** Begin Patch\n" + "".join(body) + "*** End Patch\n"}


def deny(reason: str) -> str:
    """Codex's deny, exactly (codex.md §3: any other key makes Codex fail open)."""
    out = {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }
    return json.dumps({"hookSpecificOutput": out}) + "\n"


# Codex runs shell commands in a login shell, whose profile resets PATH: its reasons name the
# memkeeper that runs the hook by its path (this suite's is in a virtual environment).
PROGRAM = shlex.quote(str(MEMKEEPER))
SAY = Reasons(AGENT, PROGRAM)
WRITE_CLAUDE = SAY.write_claude()
HISTORY = SAY.history()
REGION = SAY.region()
SHELL_APPEND = SAY.shell_append()
DELETE_HISTORY = SAY.delete_history()
MOVE_CLAUDE = (
    "CLAUDE.md is section-owned: `mv` would move it, and the sections agents keep, away from "
    "the path memkeeper manages, other agents' included. Leave the file in place; to change or "
    f"empty one section, {SAY.section_steps('CLAUDE.md')}. Whether a shared memory file goes is "
    "for a human to decide (in .memkeeper.yaml too)."
)
OWNED = SAY.owned("Codex")

LAST_DECISION = " Use SQLite for the local cache; Postgres stays the system of record.\n"
ADD_CLAUDE = "*** Add File: CLAUDE.md\n+# Project memory\n+\n+Rewritten from scratch.\n"


@dataclass(frozen=True)
class Row:
    name: str
    tool: str
    tool_input: object
    stdout: str  # exactly; "" is Codex's allow


ROWS = [
    Row(
        "apply_patch: whole-file write of CLAUDE.md",
        "apply_patch",
        patch(ADD_CLAUDE),
        deny(WRITE_CLAUDE),
    ),
    Row(
        "apply_patch: rewrite a decision",
        "apply_patch",
        patch(
            "*** Update File: memory/decisions.md\n@@\n",
            "-" + LAST_DECISION[1:],
            "+Use Postgres for the local cache.\n",
        ),
        deny(HISTORY),
    ),
    Row(
        "apply_patch: append a decision",
        "apply_patch",
        patch(
            "*** Update File: memory/decisions.md\n@@\n",
            LAST_DECISION,
            "+\n+## 2026-12-01 — codex\n+\n+Cache reads for 30 s.\n",
            "*** End of File\n",
        ),
        "",
    ),
    Row(
        "apply_patch: inside a generated region",
        "apply_patch",
        patch(
            "*** Update File: memory/status.md\n@@ ## Live claims\n",
            " <!-- memkeeper:generated source=claims -->\n+- nobody holds anything\n",
            " <!-- memkeeper:end -->\n",
        ),
        deny(REGION),
    ),
    Row(
        "apply_patch: outside the generated regions",
        "apply_patch",
        patch(
            "*** Update File: memory/status.md\n@@ ## Notes\n",
            " The Friday deploy freeze applies to this service too.\n+Also on holidays.\n",
        ),
        "",
    ),
    Row(
        "apply_patch: a section of CLAUDE.md",
        "apply_patch",
        patch(
            "*** Update File: CLAUDE.md\n@@ ## Build\n",
            "-- `make build` produces the wheel in `dist/`.\n",
            "+- `make wheel` produces the wheel in `dist/`.\n",
        ),
        "",
    ),
    Row(
        "apply_patch: a section only humans own",
        "apply_patch",
        patch(
            "*** Update File: CLAUDE.md\n@@ ## Release process\n",
            "-Only humans cut releases. Tag `vX.Y.Z` on `main`, then run `make release`.\n",
            "+Anyone may cut a release.\n",
        ),
        deny(OWNED),
    ),
    Row(
        "apply_patch: CLAUDE.md and a harmless file",
        "apply_patch",
        patch("*** Add File: src/inventory/cache.py\n+TTL = 30\n", ADD_CLAUDE),
        deny(WRITE_CLAUDE),
    ),
    Row(
        "apply_patch: delete the decision log",
        "apply_patch",
        patch("*** Delete File: memory/decisions.md\n"),
        deny(DELETE_HISTORY),
    ),
    Row(
        "apply_patch: move CLAUDE.md away",
        "apply_patch",
        patch("*** Update File: CLAUDE.md\n*** Move to: docs/CLAUDE.md\n"),
        deny(MOVE_CLAUDE),
    ),
    Row(
        "apply_patch: move an unmanaged file",
        "apply_patch",
        patch("*** Update File: src/inventory/db.py\n*** Move to: src/inventory/store.py\n"),
        "",
    ),
    Row(
        "apply_patch: a harmless new file",
        "apply_patch",
        patch("*** Add File: src/inventory/cache.py\n+TTL = 30\n"),
        "",
    ),
    Row(
        "apply_patch: a patch Codex refuses",
        "apply_patch",
        {"command": "*** Begin Patch\n*** Replace File: CLAUDE.md\n+x\n*** End Patch\n"},
        "",
    ),
    Row(
        "Bash: >> onto the log",
        "Bash",
        {"command": "echo x >> memory/decisions.md"},
        deny(SHELL_APPEND),
    ),
    Row(
        "Bash: >> onto the log, argv tool",
        "Bash",
        {"command": "bash -lc 'echo x >> memory/decisions.md'"},
        deny(SHELL_APPEND),
    ),
    Row(
        "Bash: apply_patch in a here-document",
        "Bash",
        {"command": f"apply_patch <<'EOF'\n{patch(ADD_CLAUDE)['command']}EOF\n"},
        deny(WRITE_CLAUDE),
    ),
    Row("Bash: a harmless command", "Bash", {"command": "bash -lc 'ls memory && git status'"}, ""),
    Row(
        "an MCP tool",
        "mcp__filesystem__write_file",
        {"path": "CLAUDE.md", "content": "x"},
        "",
    ),
]


repo = module_repo("codex")


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_codex_call_gets_its_exact_answer(repo: Path, row: Row) -> None:
    before = tree_bytes(repo)
    done = run_cli(repo, "hook", "codex", stdin=payload(repo, row.tool, row.tool_input))
    assert (done.code, done.stdout, done.stderr) == (0, row.stdout, "")
    assert tree_bytes(repo) == before  # the gate changed nothing it judged


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for a login shell")
def test_the_command_a_refusal_names_runs_in_codexs_login_shell(repo: Path, tmp_path: Path) -> None:
    """Codex runs commands as ``bash -lc``; a login shell's profile resets PATH (Debian's
    /etc/profile), dropping the virtual environment memkeeper lives in."""
    done = run_cli(repo, "hook", "codex", stdin=payload(repo, "apply_patch", patch(ADD_CLAUDE)))
    reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    named = re.search(r"`([^`]* sections CLAUDE.md[^`]*)`", reason)
    assert named is not None, reason
    login = subprocess.run(
        ["env", "-i", f"HOME={tmp_path}", "bash", "-lc", named.group(1)],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (login.returncode, login.stderr) == (0, "")
    assert "inventory-service/release-process" in login.stdout


@pytest.mark.parametrize(
    ("stdin", "says"),
    [
        ("{not json", "not JSON"),
        (
            json.dumps(
                {
                    "hook_event_name": "PreToolUse",
                    "turn_id": "t",
                    "tool_name": "Bash",
                    "tool_input": "ls",
                }
            ),
            "Bash: tool_input is not an object",
        ),
    ],
)
def test_a_malformed_payload_is_allowed_with_the_reason_on_stderr(
    repo: Path, stdin: str, says: str
) -> None:
    done = run_cli(repo, "hook", "codex", stdin=stdin)
    assert_allowed_because(done, "codex", "", f"cannot read the hook input ({says}")


def test_an_advisory_claim_is_a_notice_for_the_model(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    hold_build(root, "claude-code:s9")
    body = patch(
        "*** Update File: CLAUDE.md\n@@\n",
        "-- `make build` produces the wheel in `dist/`.\n",
        "+- `make wheel` produces the wheel in `dist/`.\n",
    )
    done = run_cli(root, "hook", "codex", stdin=payload(root, "apply_patch", body))
    assert (done.code, done.stderr) == (0, "")
    out = json.loads(done.stdout)
    assert list(out) == ["hookSpecificOutput"]
    assert list(out["hookSpecificOutput"]) == ["hookEventName", "additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    notice = out["hookSpecificOutput"]["additionalContext"]
    assert notice.startswith("WAIT: claude-code:s9 holds an advisory write claim")
    assert done.stdout == json.dumps(out) + "\n"


def test_post_tool_use_indexes_the_patch_as_the_codex_session(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    rename_build_step(root)  # what it applied
    body = json.loads(
        payload(
            root,
            "apply_patch",
            patch(
                "*** Update File: CLAUDE.md\n@@\n",
                "-- `make build` produces the wheel in `dist/`.\n",
                "+- `make wheel` produces the wheel in `dist/`.\n",
            ),
            "PostToolUse",
        )
    )
    body["tool_response"] = "Success. Updated the following files:\nM CLAUDE.md\n"
    done = run_cli(root, "hook", "codex", stdin=json.dumps(body))
    assert (done.code, done.stdout, done.stderr) == (0, "", "")
    last = last_event(root)
    assert (last["type"], last["actor"], last["path"], last["section"]) == (
        "section.external_edit",
        AGENT,
        "CLAUDE.md",
        "inventory-service/build",
    )
    assert (last["data"]["tool"], last["data"]["tool_use_id"]) == ("Edit", "call_9f2a1c")


def test_post_tool_use_in_a_sub_agent_is_attributed_to_it(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    notes = root / "memory" / "architecture.md"
    notes.write_text(notes.read_text() + "\nOne more line.\n")
    body = json.loads(
        payload(
            root,
            "Bash",
            {"command": "bash -lc 'echo One more line. >> memory/architecture.md'"},
            "PostToolUse",
        )
    )
    body.update(agent_id="019a2b3c-aaaa-7000-8000-00000000000a", agent_type="worker")
    body["tool_response"] = ""
    done = run_cli(root, "hook", "codex", stdin=json.dumps(body))
    assert (done.code, done.stdout, done.stderr) == (0, "", "")
    last = last_event(root)
    assert (last["actor"], last["path"], last["data"]["tool"]) == (
        f"{AGENT}/019a2b3c-aaaa-7000-8000-00000000000a",
        "memory/architecture.md",
        "Bash",
    )
