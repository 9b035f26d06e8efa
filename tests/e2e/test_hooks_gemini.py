"""``memkeeper hook gemini`` end to end: a table of Gemini CLI payloads through the real
command, each with the exact stdout and exit code Gemini reads, and an AfterTool event that
indexes the change as ``gemini:SESSION``.

Every payload has the shape of /work/shared/agent-hooks/gemini.md §2: the base fields
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
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLE_REPO, run_cli, tree_bytes

pytestmark = pytest.mark.e2e

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


def cmd(*words: str) -> str:
    return "`memkeeper " + " ".join(words) + f" --agent {AGENT}`"


def section_steps(path: str) -> str:
    """How a refusal says to change one section of ``path`` (``gate/messages.py``)."""
    return (
        f"list its sections with {cmd('sections', path)}, read one with "
        f"{cmd('read', repr(path + '#KEY'), '--json')} (its body and rev N), then replace its "
        f"body with {cmd('patch', repr(path + '#KEY'), '--expect-rev N', '--body-file F')}"
    )


WRITE_CLAUDE = (
    "CLAUDE.md is section-owned: a whole-file write replaces the file and would undo other agents' "
    f"changes made since you read it. Change one section at a time: {section_steps('CLAUDE.md')}. "
    "An edit of just the lines you change is allowed too."
)
HISTORY = (
    "memory/decisions.md is append-only: this edit changes line 7 of its history, which stays "
    "as written. Add a new entry at the end instead: "
    f"{cmd('append', 'memory/decisions.md', '--entry-file F')} (or --text 'ENTRY')."
)
REGION = (
    "memory/status.md: this edit would change generated region 'claims' (lines 8-9). "
    "memkeeper renders the text between the markers: change the text outside them, and run "
    f"{cmd('regen', 'memory/status.md')} to re-render the regions (a hand edit inside is not "
    "kept: it opens a reconciliation and fails `memkeeper check`)."
)
APPEND = cmd("append", "memory/decisions.md", "--text", "'ENTRY'")
SHELL_APPEND = (
    "memory/decisions.md is append-only: `>>` adds text by hand, without the entry template, "
    f"the event log or claim checks. Add a new entry at the end instead: {APPEND} (or "
    "--entry-file F)."
)
OWNED = (
    "A human has to approve this change, and a Gemini CLI hook cannot ask one, so memkeeper "
    "denied it: ask the user to make it. CLAUDE.md#inventory-service/release-process belongs "
    f"to human (policy .memkeeper.yaml); {AGENT} is not an owner, so `memkeeper patch` would "
    "refuse this change. Approve it only if you are, or speak for, human."
)

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


def make_repo(base: Path) -> Path:
    root = base / "repo"
    shutil.copytree(SAMPLE_REPO, root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert run_cli(root, "init").code == 0
    return root


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("gemini"))


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_gemini_call_gets_its_exact_answer(repo: Path, row: Row) -> None:
    tool_input = json.loads(json.dumps(row.tool_input).replace("{root}", str(repo)))
    before = tree_bytes(repo)
    done = run_cli(repo, "hook", "gemini", stdin=payload(repo, row.tool, tool_input))
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
    assert (done.code, done.stdout) == (0, ALLOW)  # JSON on stdout: Gemini reads no stderr
    assert done.stderr.startswith(f"memkeeper hook gemini: cannot read the hook input ({says}")
    assert done.stderr.endswith("; allowed\n")


def test_an_advisory_claim_is_a_notice_for_the_user(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    held = run_cli(root, "claim", "CLAUDE.md#inventory-service/build", "--agent", "claude-code:s9")
    assert held.code == 0, held.stderr
    body = replace("CLAUDE.md", "`make build` produces", "`make wheel` produces")
    done = run_cli(root, "hook", "gemini", stdin=payload(root, "replace", body))
    assert (done.code, done.stderr) == (0, "")
    out = json.loads(done.stdout)
    assert list(out) == ["systemMessage"]
    assert out["systemMessage"].startswith("WAIT: claude-code:s9 holds an advisory write claim")
    assert done.stdout == json.dumps(out) + "\n"


def last_event(root: Path) -> dict[str, Any]:
    done = run_cli(root, "events", "--json")
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_after_tool_indexes_the_change_as_the_gemini_session(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    claude = root / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("make build", "make wheel"))  # what it did
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
    root = make_repo(tmp_path)
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
