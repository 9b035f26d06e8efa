"""The Claude Code gate: a table of real hook payloads and the decision each one gets.

Every row runs through the pure ``gate.decide`` over facts gathered from a copy of the
sample repository; the rows marked ``e2e`` also run through ``memkeeper hook claude-code``
with the payload on stdin, with their claims taken by the real ``memkeeper claim``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from memkeeper.api import Memory
from memkeeper.claims.decisions import Claim
from memkeeper.gate import decide as gate
from memkeeper.gate import facts as gatefacts
from memkeeper.gate.agents.claude_code import hook_output
from memkeeper.gate.hook import gather
from memkeeper.gate.payload import parse_call
from memkeeper.ops.setup import init
from tests.conftest import run_main
from tests.gate.helpers import edit

SESSION_AGENT = "claude-code:s1"
Expect = Literal["silent", "allow", "deny", "ask"]
DECISIONS = "memory/decisions.md"
LAST_ENTRY = "Use SQLite for the local cache; Postgres stays the system of record.\n"
STATUS_REGION = "<!-- memkeeper:generated source=claims -->\n<!-- memkeeper:end -->"


@dataclass(frozen=True)
class Case:
    name: str
    tool: str
    tool_input: dict[str, Any]
    expect: Expect
    says: tuple[str, ...] = ()
    claim: tuple[str, str, bool] | None = None  # (agent, target, strict)
    cwd: str = ""  # relative to the root
    e2e: bool = False


def bash(command: str) -> dict[str, Any]:
    return {"command": command, "description": "run it", "timeout": 120000}


BUILD = edit("{root}/CLAUDE.md", "make build", "make wheel")
PATCH_BUILD = "memkeeper patch 'CLAUDE.md#inventory-service/build' --expect-rev 1 --body-file F"
CASES = [
    # -- Write ------------------------------------------------------------------------------
    Case(
        "write section-owned, one section changed",
        "Write",
        {"file_path": "{root}/CLAUDE.md", "content": "{claude_with_wheel}"},
        "deny",
        ("memkeeper read 'CLAUDE.md#inventory-service/build' --json", PATCH_BUILD),
        e2e=True,
    ),
    Case(
        "write append-only",
        "Write",
        {"file_path": "{root}/memory/decisions.md", "content": "# Decision log\n"},
        "deny",
        ("append-only", "memkeeper append memory/decisions.md --entry-file F"),
        e2e=True,
    ),
    Case(
        "write generated",
        "Write",
        {"file_path": "{root}/memory/status.md", "content": "# Status\n"},
        "deny",
        ("memkeeper regen memory/status.md", "memkeeper patch 'memory/status.md#KEY'"),
    ),
    Case(
        "write private",
        "Write",
        {"file_path": "{root}/memory/scratch/agent-a.md", "content": "mine\n"},
        "silent",
        e2e=True,
    ),
    Case(
        "write unmanaged", "Write", {"file_path": "{root}/src/x.py", "content": "x = 1\n"}, "silent"
    ),
    Case(
        "write creates a new section-owned file",
        "Write",
        {"file_path": "{root}/memory/new.md", "content": "# New\n"},
        "silent",
    ),
    Case(
        "write relative to cwd",
        "Write",
        {"file_path": "CLAUDE.md", "content": "# Gone\n"},
        "deny",
        ("memkeeper sections CLAUDE.md", "memkeeper patch 'CLAUDE.md#"),
        e2e=True,
    ),
    Case(
        "write relative to a subdirectory cwd",
        "Write",
        {"file_path": "../AGENTS.md", "content": "# Agents\n"},
        "deny",
        ("../AGENTS.md is section-owned", "memkeeper read '../AGENTS.md#"),
        cwd="memory",
    ),
    Case(
        "write outside the root",
        "Write",
        {"file_path": "/tmp/elsewhere/CLAUDE.md", "content": "x"},
        "silent",
        e2e=True,
    ),
    # -- Edit and MultiEdit -----------------------------------------------------------------
    Case("edit a section, no claims", "Edit", BUILD, "silent", e2e=True),
    Case(
        "edit a section under another agent's advisory claim",
        "Edit",
        BUILD,
        "allow",
        ("WAIT: agent-a holds an advisory write claim", "(expires in ", "memkeeper claim"),
        claim=("agent-a", "CLAUDE.md", False),
        e2e=True,
    ),
    Case(
        "edit a section under another agent's strict claim",
        "Edit",
        BUILD,
        "deny",
        ("agent-a holds a strict write claim", "expires in", "memkeeper claim 'CLAUDE.md#"),
        claim=("agent-a", "CLAUDE.md#inventory-service/build", True),
        e2e=True,
    ),
    Case(
        "edit a section under the agent's own strict claim",
        "Edit",
        BUILD,
        "silent",
        claim=(SESSION_AGENT, "CLAUDE.md", True),
        e2e=True,
    ),
    Case(
        "edit a section next to another agent's strict claim",
        "Edit",
        BUILD,
        "silent",
        claim=("agent-a", "CLAUDE.md#inventory-service/testing", True),
    ),
    Case(
        "edit a section a human owns",
        "Edit",
        edit("{root}/CLAUDE.md", "Only humans cut releases.", "Anyone cuts releases."),
        "ask",
        ("CLAUDE.md#inventory-service/release-process belongs to human",),
        e2e=True,
    ),
    Case(
        "edit append-only history",
        "Edit",
        edit("{root}/memory/decisions.md", "Use SQLite", "Use Postgres"),
        "deny",
        ("changes line 7 of its history", "memkeeper append memory/decisions.md"),
        e2e=True,
    ),
    Case(
        "edit that only appends to append-only history",
        "Edit",
        edit("{root}/memory/decisions.md", LAST_ENTRY, LAST_ENTRY + "\n## 2026-12-01\n\nMore.\n"),
        "silent",
    ),
    Case(
        "multiedit that appends, then rewrites history",
        "MultiEdit",
        {
            "file_path": "{root}/memory/decisions.md",
            "edits": [
                {"old_string": LAST_ENTRY, "new_string": LAST_ENTRY + "\nMore.\n"},
                {"old_string": "# Decision log", "new_string": "# Decisions", "replace_all": True},
            ],
        },
        "deny",
        ("changes line 1 of its history", "memkeeper append"),
    ),
    Case(
        "edit inside a generated region",
        "Edit",
        edit("{root}/memory/status.md", STATUS_REGION, STATUS_REGION.replace("\n", "\nmine\n")),
        "deny",
        ("generated region 'claims'", "memkeeper regen memory/status.md"),
        e2e=True,
    ),
    Case(
        "edit a generated file outside its regions",
        "Edit",
        edit("{root}/memory/status.md", "Friday deploy freeze", "Friday freeze"),
        "silent",
    ),
    Case(
        "edit a private file",
        "Edit",
        edit("{root}/memory/scratch/agent-a.md", "batching", "chunking"),
        "silent",
    ),
    Case(
        "edit whose old string is not there",
        "Edit",
        edit("{root}/memory/decisions.md", "no such text", "x"),
        "silent",
    ),
    Case(
        "edit an unmanaged file under another agent's strict claim",
        "Edit",
        edit("{root}/src/inventory/db.py", "import sqlite3", "import sqlite3 as db"),
        "deny",
        ("agent-a holds a strict write claim", "on src/", "--wait"),
        claim=("agent-a", "src/", True),
    ),
    Case(
        "edit an unmanaged file next to another agent's strict claim",
        "Edit",
        edit("{root}/src/inventory/db.py", "import sqlite3", "import sqlite3 as db"),
        "silent",
        claim=("agent-a", "docs/", True),
    ),
    Case(
        "write an unmanaged file under another agent's strict claim",
        "Write",
        {"file_path": "{root}/src/inventory/db.py", "content": "x = 2\n"},
        "deny",
        ("agent-a holds a strict write claim", "on src/", "memkeeper claim src/inventory/db.py"),
        claim=("agent-a", "src/", True),
        e2e=True,
    ),
    # -- Bash -------------------------------------------------------------------------------
    Case(
        "bash appends to history",
        "Bash",
        bash("echo '- more' >> memory/decisions.md"),
        "deny",
        ("memkeeper append memory/decisions.md --text",),
        e2e=True,
    ),
    Case(
        "bash redirect over a section-owned file",
        "Bash",
        bash("cat draft.md > CLAUDE.md"),
        "deny",
        ("`>` would rewrite it", "memkeeper sections CLAUDE.md"),
    ),
    Case(
        "bash sed -i after cd, in an && chain",
        "Bash",
        bash("cd memory && sed -i 's/SQLite/Postgres/' architecture.md"),
        "deny",
        ("memory/architecture.md is section-owned", "`sed -i`"),
        e2e=True,
    ),
    Case(
        "bash git checkout -- of a managed file",
        "Bash",
        bash("git status && git checkout -- CLAUDE.md"),
        "deny",
        ("git show HEAD:CLAUDE.md", "memkeeper patch 'CLAUDE.md#KEY'"),
    ),
    Case(
        "bash mv onto a quoted managed path",
        "Bash",
        bash('mv new.md "memory/risks.md"'),
        "deny",
        ("memory/risks.md is append-only", "memkeeper append memory/risks.md"),
    ),
    Case(
        "bash tee -a onto a generated file",
        "Bash",
        bash("echo note | tee -a memory/status.md"),
        "deny",
        ("last section, status/notes", "--expect-rev 1", "memkeeper regen"),
    ),
    Case(
        "bash absolute path with a pipe and ;",
        "Bash",
        bash("ls | sort > /tmp/out.txt; echo x > {root}/AGENTS.md"),
        "deny",
        ("AGENTS.md is section-owned",),
        e2e=True,
    ),
    Case("bash quoted redirect", "Bash", bash('echo "x > CLAUDE.md"'), "silent", e2e=True),
    Case("bash into a private file", "Bash", bash("echo hi > memory/scratch/n.md"), "silent"),
    Case("bash unknown target", "Bash", bash('cat x > "$HOME/CLAUDE.md"'), "silent"),
    Case("bash creates a managed file", "Bash", bash("cp /tmp/x.md memory/"), "silent"),
    Case(
        "bash writes an unmanaged file under an advisory claim",
        "Bash",
        bash("echo x > src/inventory/db.py"),
        "allow",
        ("WAIT: agent-b holds",),
        claim=("agent-b", "src/inventory/", False),
    ),
    # -- everything else --------------------------------------------------------------------
    Case("read a managed file", "Read", {"file_path": "{root}/CLAUDE.md"}, "silent", e2e=True),
    Case("grep", "Grep", {"pattern": "build", "path": "{root}"}, "silent"),
]


def fill(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [fill(v, values) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, values) for k, v in value.items()}
    return value


def payload(root: Path, case: Case, event: str = "PreToolUse") -> dict[str, Any]:
    claude = (root / "CLAUDE.md").read_text().replace("make build", "make wheel")
    return {
        "session_id": "s1",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": str(root / case.cwd),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": case.tool,
        "tool_input": fill(case.tool_input, {"root": str(root), "claude_with_wheel": claude}),
        "tool_use_id": "toolu_01",
    }


@pytest.fixture
def root(sample: Path) -> Path:
    init(
        Memory.open(sample).workspace, None
    )  # as `memkeeper init` leaves it: every managed file indexed
    return sample


def claim_object(agent: str, target: str, strict: bool, now: float) -> Claim:
    return Claim("c7", 7, agent, "write", (target,), 0, strict, now - 5, now + 600, "")


def pure_answer(root: Path, case: Case) -> dict[str, Any] | None:
    call = parse_call(json.dumps(payload(root, case)), str(root))
    memory = Memory.open(root, agent=SESSION_AGENT)
    facts = gather(memory.workspace, call, gate.targets(call), f" --agent {SESSION_AGENT}")
    if case.claim is not None:
        facts = facts._replace(claims=(claim_object(*case.claim, facts.now),))
    return hook_output(gate.decide(call, facts))


def assert_answer(answer: dict[str, Any] | None, case: Case) -> None:
    if case.expect == "silent":
        assert answer is None
        return
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    # a notice ("allow" with words) adds context for the model and decides no permission
    assert out.get("permissionDecision", "allow") == case.expect
    assert ("permissionDecision" in out) == (case.expect != "allow")
    for text in case.says:
        assert text in out.get("permissionDecisionReason", out.get("additionalContext", ""))


def test_the_table_covers_every_tool_class_claim_state_and_bash_form() -> None:
    assert len(CASES) >= 25
    assert {c.tool for c in CASES} >= {"Write", "Edit", "MultiEdit", "Bash", "Read"}
    assert {c.expect for c in CASES} == {"silent", "allow", "deny", "ask"}
    assert sum(c.e2e for c in CASES) >= 12


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_payload_gets_its_decision(root: Path, case: Case) -> None:
    assert_answer(pure_answer(root, case), case)


E2E = [c for c in CASES if c.e2e]
BY_NAME = {c.name: c for c in CASES}
WRITE_HISTORY = BY_NAME["write append-only"]
EDIT_BUILD = BY_NAME["edit a section, no claims"]


@pytest.mark.parametrize("case", E2E, ids=[c.name for c in E2E])
def test_each_payload_gets_its_decision_from_the_cli(root: Path, case: Case) -> None:
    if case.claim is not None:
        agent, target, strict = case.claim
        args = ["claim", target, "--agent", agent, "--ttl", "600"] + ["--strict"] * strict
        assert run_main(root, *args).code == 0
    done = run_main(root, "hook", "claude-code", stdin=json.dumps(payload(root, case)))
    assert done.code == 0, done.stderr
    assert done.stderr == ""
    assert_answer(json.loads(done.stdout) if done.stdout else None, case)


def test_the_commands_a_denial_names_run_and_make_the_change(root: Path) -> None:
    case = BY_NAME["write section-owned, one section changed"]
    done = run_main(root, "hook", "claude-code", stdin=json.dumps(payload(root, case)))
    reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    read, patch = re.findall(r"`(memkeeper (?:read|patch) [^`]*)`", reason)
    body = json.loads(run_shell(root, read))["content"].replace("make build", "make wheel")
    (root.parent / "F").write_text(body)
    run_shell(root, patch.replace("--body-file F", f"--body-file {root.parent / 'F'}"))
    assert "make wheel" in (root / "CLAUDE.md").read_text()
    events = run_main(root, "events", "--json").stdout.splitlines()
    assert json.loads(events[-1])["actor"] == SESSION_AGENT


def run_shell(root: Path, command: str) -> str:
    argv = shlex.split(command)
    assert argv[0] == "memkeeper"
    done = run_main(root, *argv[1:])
    assert done.code == 0, done.stderr
    return done.stdout


def test_the_root_comes_from_the_payloads_cwd_not_the_process(root: Path, tmp_path: Path) -> None:
    case = WRITE_HISTORY
    done = run_main(
        root, "hook", "claude-code", stdin=json.dumps(payload(root, case)), cwd=tmp_path
    )
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_memkeeper_agent_names_the_agent_and_is_left_out_of_the_commands(root: Path) -> None:
    run_main(root, "claim", "CLAUDE.md", "--agent", "agent-x", "--strict", "--ttl", "600")
    body = json.dumps(payload(root, EDIT_BUILD))
    mine = run_main(root, "hook", "claude-code", stdin=body, env={"MEMKEEPER_AGENT": "agent-x"})
    assert mine.stdout == ""
    other = run_main(root, "hook", "claude-code", stdin=json.dumps(payload(root, WRITE_HISTORY)))
    assert "--agent claude-code:s1" in other.stdout
    env = {"MEMKEEPER_AGENT": "agent-y"}
    again = run_main(
        root, "hook", "claude-code", stdin=json.dumps(payload(root, WRITE_HISTORY)), env=env
    )
    assert "--agent" not in again.stdout


def test_a_root_without_memkeeper_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# Hi\n")
    case = Case("write", "Write", {"file_path": "{root}/CLAUDE.md", "content": "x"}, "silent")
    done = run_main(tmp_path, "hook", "claude-code", stdin=json.dumps(payload(tmp_path, case)))
    assert (done.code, done.stdout, done.stderr) == (0, "", "")
    assert not (tmp_path / ".memkeeper").exists()


# -- malformed input and failures allow, and say why on stderr -------------------------------------

MALFORMED = {
    "not json": b"this is not json",
    "not utf-8": b"\xff\xfe{",
    "a list": b"[]",
    "no event": b'{"tool_name": "Edit"}',
    "no tool name": b'{"hook_event_name": "PreToolUse", "tool_input": {}}',
    "no tool input": b'{"hook_event_name": "PreToolUse", "tool_name": "Write"}',
    "no file path": b'{"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {}}',
    "path not a string": (
        b'{"hook_event_name": "PreToolUse", "tool_name": "Write",'
        b' "tool_input": {"file_path": 42, "content": "x"}}'
    ),
    "edits not a list": (
        b'{"hook_event_name": "PreToolUse", "tool_name": "MultiEdit",'
        b' "tool_input": {"file_path": "/x", "edits": {}}}'
    ),
    "replace_all not a bool": (
        b'{"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input":'
        b' {"file_path": "/x", "old_string": "a", "new_string": "b", "replace_all": "yes"}}'
    ),
    "command not a string": (
        b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": 1}}'
    ),
}


@pytest.mark.parametrize("raw", MALFORMED.values(), ids=list(MALFORMED))
def test_a_malformed_payload_is_allowed_and_explained(root: Path, raw: bytes) -> None:
    done = run_main(root, "hook", "claude-code", stdin=raw)
    assert (done.code, done.stdout) == (0, "")
    assert done.stderr.startswith("memkeeper hook claude-code: cannot read the hook input (")
    assert "allowed" in done.stderr


def test_a_failure_of_the_gate_itself_allows_and_says_why(root: Path) -> None:
    (root / ".memkeeper.yaml").write_text("version: 1\nfiles: [{path: x, class: nonsense}]\n")
    done = run_main(root, "hook", "claude-code", stdin=json.dumps(payload(root, WRITE_HISTORY)))
    assert (done.code, done.stdout) == (0, "")
    assert "the gate failed" in done.stderr
    assert ".memkeeper.yaml" in done.stderr


def test_events_the_gate_does_not_judge_get_no_answer(root: Path) -> None:
    raw = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "hi", "cwd": str(root)})
    call = parse_call(raw, str(root))
    assert gate.targets(call) == ()
    assert gate.decide(call, gatefacts.Facts(str(root), str(root), "a", "", 0.0)) == gate.ALLOW


# -- PostToolUse indexes what the tool changed and names the agent -----------------------------


def post(root: Path, case: Case, **env: str) -> None:
    body = json.dumps(payload(root, case, event="PostToolUse"))
    done = run_main(root, "hook", "claude-code", stdin=body, env=env)
    assert (done.code, done.stdout, done.stderr) == (0, "", "")


def last_event(root: Path) -> dict[str, Any]:
    event: dict[str, Any] = json.loads(run_main(root, "events", "--json").stdout.splitlines()[-1])
    return event


def test_post_tool_use_indexes_an_edit_as_the_sessions_agent(root: Path) -> None:
    claude = root / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("make build", "make wheel"))
    post(root, EDIT_BUILD)
    event = last_event(root)
    assert (event["type"], event["section"]) == ("section.external_edit", "inventory-service/build")
    assert event["actor"] == SESSION_AGENT
    assert event["data"]["tool"] == "Edit"
    assert event["data"]["rev"] == 2


def test_post_tool_use_after_bash_indexes_as_memkeeper_agent(root: Path) -> None:
    arch = root / "memory" / "architecture.md"
    arch.write_text(arch.read_text() + "More.\n")
    case = Case("bash", "Bash", bash("echo More. >> memory/architecture.md"), "silent")
    post(root, case, MEMKEEPER_AGENT="agent-z")
    event = last_event(root)
    assert (event["actor"], event["path"], event["data"]["tool"]) == (
        "agent-z",
        "memory/architecture.md",
        "Bash",
    )


def test_post_tool_use_leaves_private_and_unmanaged_files_alone(root: Path) -> None:
    before = run_main(root, "events", "--json").stdout
    (root / "memory" / "scratch" / "agent-a.md").write_text("changed\n")
    post(root, BY_NAME["write private"])
    post(root, BY_NAME["write unmanaged"])  # a file that does not exist
    assert run_main(root, "events", "--json").stdout == before


def test_post_tool_use_is_never_a_permission_decision(root: Path) -> None:
    call = parse_call(json.dumps(payload(root, WRITE_HISTORY, event="PostToolUse")), str(root))
    memory = Memory.open(root, agent=SESSION_AGENT)
    facts = gather(memory.workspace, call, gate.targets(call), "")
    assert hook_output(gate.decide(call, facts)) is None


# -- the file a path reaches, in the root that holds it ----------------------------------------


def in_process(body: dict[str, Any], root: str | None = None) -> tuple[str, str]:
    """``gate.hook.run`` on ``body`` in this process: its stdout and stderr."""
    import io

    from memkeeper.gate.hook import run

    out, err = io.StringIO(), io.StringIO()
    assert run("claude-code", root, None, io.BytesIO(json.dumps(body).encode()), out, err) == 0
    return out.getvalue(), err.getvalue()


def hook_call(
    cwd: Path, tool: str, tool_input: dict[str, Any], event: str = "PreToolUse"
) -> dict[str, Any]:
    return {
        "session_id": "s1",
        "cwd": str(cwd),
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_02",
    }


def verdict(stdout: str) -> str:
    return (
        "silent"
        if not stdout
        else str(json.loads(stdout)["hookSpecificOutput"].get("permissionDecision", "allow"))
    )


def test_a_write_through_a_symlink_is_judged_as_the_file_it_reaches(root: Path) -> None:
    (root / "LINK.md").symlink_to("memory/decisions.md")  # an unmanaged name
    out, err = in_process(hook_call(root, "Write", {"file_path": "LINK.md", "content": "x"}))
    assert (verdict(out), err) == ("deny", "")
    assert "LINK.md (a symlink to memory/decisions.md) is append-only history" in out


def test_a_session_outside_the_repository_is_gated_with_root_in_the_commands(root: Path) -> None:
    command = f"echo x >> {root.name}/memory/decisions.md"
    out, _ = in_process(hook_call(root.parent, "Bash", bash(command)))
    assert verdict(out) == "deny"
    assert f"--root {root}" in out


@pytest.mark.peer("git")
def test_a_command_reaching_two_roots_is_denied_in_each(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(root, other, ignore=shutil.ignore_patterns(".memkeeper", ".git"))
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    command = f"echo x >> memory/decisions.md; rm {other}/CLAUDE.md"
    out, _ = in_process(hook_call(root, "Bash", bash(command)))
    reason = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "memory/decisions.md is append-only" in reason
    assert "CLAUDE.md is section-owned: `rm` would delete it" in reason
    assert f"--root {other}" in reason


def test_post_tool_use_through_a_symlink_indexes_the_file_it_reaches(root: Path) -> None:
    (root / "LINK.md").symlink_to("CLAUDE.md")
    claude = root / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("make build", "make wheel"))
    edit_link = edit(str(root / "LINK.md"), "make build", "make wheel")
    assert in_process(hook_call(root, "Edit", edit_link, "PostToolUse")) == ("", "")
    event = last_event(root)
    assert (event["path"], event["actor"]) == ("CLAUDE.md", SESSION_AGENT)


def test_post_tool_use_after_a_sweep_indexes_the_files_it_changed(root: Path) -> None:
    arch = root / "memory" / "architecture.md"
    arch.write_text(arch.read_text().replace("SQLite", "DuckDB"))
    command = "find memory -name 'arch*.md' -exec sed -i s/SQLite/DuckDB/ {} +"
    assert in_process(hook_call(root, "Bash", bash(command), "PostToolUse")) == ("", "")
    assert (last_event(root)["path"], last_event(root)["data"]["tool"]) == (
        "memory/architecture.md",
        "Bash",
    )


@pytest.mark.peer("git")
def test_a_git_sweep_asks_git_what_changed_and_judges_only_that(root: Path) -> None:
    who = {
        f"GIT_{role}_{part}": "t" for role in ("AUTHOR", "COMMITTER") for part in ("NAME", "EMAIL")
    }
    env = {**os.environ, **who}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "x"], cwd=root, check=True, env=env)
    stash = hook_call(root, "Bash", bash("git stash"))
    assert verdict(in_process(stash)[0]) == "silent"
    (root / "memory" / "risks.md").write_text("# Risks\n\nnone\n")
    out, _ = in_process(stash)
    assert verdict(out) == "deny"
    assert "memory/risks.md (append-only history)" in out
    assert "CLAUDE.md" not in out


def test_a_symlinked_directory_in_the_root_resolves_for_a_sweep(root: Path) -> None:
    (root / "mem").symlink_to("memory")
    assert verdict(in_process(hook_call(root, "Bash", bash("rm -rf mem")))[0]) == "silent"
    out, _ = in_process(hook_call(root, "Bash", bash("rm -rf mem/")))  # empties memory/
    assert "memory/decisions.md (append-only history)" in out
    out, _ = in_process(hook_call(root, "Bash", bash("cd mem && rm -rf ../memory")))
    assert "memory/decisions.md (append-only history)" in out
