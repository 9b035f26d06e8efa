"""Never block by crashing (docs/reference.md §7 and §10): for every agent in
``memkeeper.gate.agents.AGENTS``, a pre-tool call that memkeeper would judge reaches a core
broken on disk — a state store that is not a database, one from a newer memkeeper, a policy
that is not YAML, a memory file it cannot read — and the real ``memkeeper hook AGENT``
answers exactly that agent's allow (``ADAPTER.allow("pre")``: for Copilot, whose hooks fail
closed, ``{}`` and exit 0), says why on stderr, and finishes well within the agent's
timeout. The same for stdin that is not JSON at all.

Nothing in the product is there for this test: the faults are files a real repository can
end up with. The registry is read when the tests are collected, so an adapter added to
``AGENTS`` is covered as soon as it lands; one without a fixture below is skipped, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memkeeper.gate import agents
from tests.conftest import Run, run_cli
from tests.e2e.hooktables import module_repo

APPEND = "echo x >> memory/decisions.md"
WITHIN_S = 5.0  # every agent's timeout is 30 s or more; a gate that fails must not get near it


@dataclass(frozen=True)
class Fixture:
    """One realistic pre-tool call per agent, a shell append onto the decision log."""

    payload: Callable[[str], dict[str, Any]]  # the repository's path → the hook's stdin
    argv: tuple[str, ...] = ()  # after `memkeeper hook AGENT`, as the installed hook has it
    timeout_s: float = 30.0  # the agent's hook timeout (the shortest documented default)


FIXTURES = {
    # The example inputs (PreToolUse), after the Claude Code
    # hooks reference (code.claude.com/docs/en/hooks "PreToolUse input"); timeout 600 s (§5).
    "claude-code": Fixture(
        lambda root: {
            "session_id": "abc123",
            "transcript_path": "/home/dev/.claude/projects/-home-dev-repo/00893aaf.jsonl",
            "cwd": root,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {
                "command": APPEND,
                "description": "Append to decisions log",
                "timeout": 120000,
                "run_in_background": False,
            },
            "tool_use_id": "toolu_01ABC125",
        },
        timeout_s=600,
    ),
    # codex.md §2 "Example inputs (PreToolUse)", after openai/codex codex-rs/hooks (the
    # PreToolUse command input); timeout 600 s by default (§5).
    "codex": Fixture(
        lambda root: {
            "session_id": "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b",
            "turn_id": "019a2b3c-5555-7000-8000-000000000001",
            "transcript_path": None,
            "cwd": root,
            "hook_event_name": "PreToolUse",
            "model": "gpt-5.5-codex",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_use_id": "call_9f2a1e",
            "tool_input": {"command": APPEND},
        },
        timeout_s=600,
    ),
    # gemini.md §2 "Example inputs (BeforeTool)", shell append, after google-gemini/gemini-cli
    # docs/hooks; timeout 60 000 ms by default (§5).
    "gemini": Fixture(
        lambda root: {
            "session_id": "51124319-e155-440c-b950-09aeb2ea488f",
            "transcript_path": "/home/dev/.gemini/tmp/3f2a/chats/session-51124319.jsonl",
            "cwd": root,
            "hook_event_name": "BeforeTool",
            "timestamp": "2026-10-05T10:00:03.789Z",
            "tool_name": "run_shell_command",
            "tool_input": {"command": APPEND, "description": "Append to the decisions log"},
        },
        timeout_s=60,
    ),
    # copilot.md §2 "Example inputs (camelCase preToolUse)", after github/docs
    # content/copilot/reference/hooks-reference.md; no event in the payload, so the installed
    # command names it (§1 "Minimal config"); timeout 30 s, and a crash denies (§5).
    "copilot": Fixture(
        lambda root: {
            "sessionId": "2c5b65f5-bb1d-4479-826e-c9cdacac321b",
            "timestamp": 1791176776100,
            "cwd": root,
            "toolName": "bash",
            "toolArgs": {
                "command": APPEND,
                "description": "Append to the decisions log",
                "mode": "sync",
                "initial_wait": 30,
            },
        },
        ("--event", "preToolUse"),
    ),
    # cursor.md §2 "Example inputs (preToolUse)", Shell, after cursor.com/docs/hooks; the
    # installed timeout is 30 s (§1 "Minimal config"; no default is documented).
    "cursor": Fixture(
        lambda root: {
            "conversation_id": "fc749b53-5672-41fa-87c7-c579c337199d",
            "generation_id": "0b1e2c3d-0000-4000-8000-000000000003",
            "model": "default",
            "hook_event_name": "preToolUse",
            "cursor_version": "2026.10.01-e373342",
            "workspace_roots": [root],
            "user_email": "dev@example.com",
            "transcript_path": None,
            "cwd": root,
            "tool_name": "Shell",
            "tool_use_id": "73da88f4-bc52-4b85-bdbe-34de8fa9c3ea",
            "tool_input": {"command": APPEND, "cwd": root, "timeout": 30000},
        },
    ),
    # cline.md §2 "Example inputs: (A) VS Code PreToolUse", shell append, after cline/cline
    # @ 21cb8d2 apps/vscode/src/sdk/hooks-adapter.ts (the parameters as strings); the hook
    # file runs `memkeeper hook cline --event PreToolUse` (§1); timeout 30 s (§5).
    "cline": Fixture(
        lambda root: {
            "clineVersion": "4.2.0",
            "hookName": "PreToolUse",
            "timestamp": "1791176776100",
            "taskId": "01K9Z2X7R4C1B8D3E5F6G7H8J9",
            "workspaceRoots": [root],
            "userId": "c0ffee00-1111-2222-3333-444455556666",
            "model": {"provider": "unknown", "slug": "unknown"},
            "preToolUse": {
                "toolName": "run_commands",
                "parameters": {"commands": json.dumps([APPEND])},
            },
        },
        ("--event", "PreToolUse"),
    ),
}


# -- the faults: files a real repository can end up with ------------------------------------------


def _store(root: Path) -> Path:
    store = root / ".memkeeper" / "state.db"
    for extra in (store.with_name("state.db-wal"), store.with_name("state.db-shm")):
        extra.unlink(missing_ok=True)
    return store


def garbage_store(root: Path) -> None:
    _store(root).write_bytes(b"not a database, just what a bad merge left here\n" * 100)


def newer_store(root: Path) -> None:
    with sqlite3.connect(root / ".memkeeper" / "state.db") as db:
        db.execute("PRAGMA user_version = 99")
    db.close()


def store_is_a_directory(root: Path) -> None:
    store = _store(root)
    store.unlink()
    store.mkdir()


def policy_not_yaml(root: Path) -> None:
    (root / ".memkeeper.yaml").write_text("version: 1\nfiles: [\n  - path: CLAUDE.md\n")


def unreadable_history(root: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root, which reads every file: chmod cannot make one unreadable")
    (root / "memory" / "decisions.md").chmod(0)


FAULTS = [
    garbage_store,
    pytest.param(newer_store, marks=pytest.mark.slow),  # the suite runs one of each kind:
    pytest.param(store_is_a_directory, marks=pytest.mark.slow),  # a broken store, a broken
    policy_not_yaml,  # policy; the rest with -m slow
    pytest.param(unreadable_history, marks=pytest.mark.slow),
]
FAULT_IDS = [
    "garbage_store",
    "newer_store",
    "store_is_a_directory",
    "policy_not_yaml",
    "unreadable_history",
]


repo = module_repo("fail-open")  # the calls that change nothing run in it


@pytest.fixture
def fresh(repo: Path, tmp_path: Path) -> Path:
    """A copy of ``repo``, for a test that breaks something."""
    return Path(shutil.copytree(repo, tmp_path / "repo", symlinks=True))


def fixture_of(agent: str) -> Fixture:
    found = FIXTURES.get(agent)
    if found is None:
        pytest.skip(f"no pre-tool fixture for agent {agent!r} yet: add one to FIXTURES")
    return found


def hook(root: Path, agent: str, argv: tuple[str, ...], stdin: str | bytes) -> tuple[Run, float]:
    start = time.monotonic()
    done = run_cli(root, "hook", agent, *argv, stdin=stdin)
    return done, time.monotonic() - start


# -- the tests -----------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", agents.AGENTS)
def test_each_fixture_is_judged_when_nothing_is_broken(fresh: Path, agent: str) -> None:
    """The control: the call reaches the core's decision, so a fault below breaks it there."""
    fixture = fixture_of(agent)
    root = fresh
    done, _ = hook(root, agent, fixture.argv, json.dumps(fixture.payload(str(root))))
    allowed = agents.adapter(agent).allow("pre")
    assert done.stderr == ""
    assert (done.stdout, done.code) != (allowed.stdout, allowed.code), "the fixture is not judged"
    assert "memory/decisions.md" in done.stdout + done.stderr


@pytest.mark.parametrize("fault", FAULTS, ids=FAULT_IDS)
@pytest.mark.parametrize("agent", agents.AGENTS)
def test_a_broken_core_answers_the_agents_allow_and_says_why(
    fresh: Path, agent: str, fault: Callable[[Path], None]
) -> None:
    fixture = fixture_of(agent)
    root = fresh
    fault(root)
    done, took = hook(root, agent, fixture.argv, json.dumps(fixture.payload(str(root))))
    allowed = agents.adapter(agent).allow("pre")
    assert (done.stdout, done.code) == (allowed.stdout, allowed.code)
    assert done.stderr.startswith(f"memkeeper hook {agent}: the gate failed ("), done.stderr
    assert done.stderr.endswith("); allowed\n"), done.stderr
    assert took < min(WITHIN_S, fixture.timeout_s)


NO_FIXTURE = Fixture(lambda root: {})  # stdin that is not JSON needs no payload
NOT_JSON = [
    "echo x >> memory/decisions.md",
    "",
    b"\xff\xfe\x00garbage",
    '{"hook_event_name": "PreToolUse", "tool_name": "Bash"',
]


@pytest.mark.parametrize("stdin", NOT_JSON, ids=["text", "empty", "not UTF-8", "cut short"])
@pytest.mark.parametrize("agent", agents.AGENTS)
def test_stdin_that_is_not_json_answers_the_agents_allow_and_says_why(
    repo: Path, agent: str, stdin: str | bytes
) -> None:
    fixture = FIXTURES.get(agent, NO_FIXTURE)
    done, took = hook(repo, agent, fixture.argv, stdin)
    allowed = agents.adapter(agent).allow("pre")
    assert (done.stdout, done.code) == (allowed.stdout, allowed.code)
    assert done.stderr.startswith(f"memkeeper hook {agent}: cannot read the hook input ("), (
        done.stderr
    )
    assert done.stderr.endswith("); allowed\n"), done.stderr
    assert took < min(WITHIN_S, fixture.timeout_s)
