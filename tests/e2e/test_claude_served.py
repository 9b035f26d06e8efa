"""Issue 23 item 6 with the real Claude Code CLI (offline, ``fakemodel``): the gate served by
``memkeeper watch`` over Claude Code's http hooks denies an Edit another agent's strict claim
forbids — answered by the daemon while the command hook steps aside — and once the daemon is
killed the command hook denies it again (fail closed: an http hook that cannot connect lets
the call through, the command hook does not).

Each session runs ``claude -p`` (``claudecli``) with ``--debug-file``: Claude Code's own log
says which hooks it ran and what each answered. Without the CLI these tests are skipped.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.fs import gateconfig
from tests.conftest import run_cli
from tests.e2e.claudecli import CLAUDE, Session, finish, session
from tests.e2e.fakemodel import FakeModel, Step, Text, Tool
from tests.e2e.hooktables import initialised
from tests.e2e.test_daemon import Streamed

pytestmark = pytest.mark.skipif(
    CLAUDE is None,
    reason="the Claude Code CLI is not installed: npm install --prefix .cache/agents "
    "@anthropic-ai/claude-code (or set MEMKEEPER_TEST_CLAUDE to its path)",
)

LINE = "- `make build` produces the wheel in `dist/`."


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """sample-repo, initialised, with Claude Code's gate installed and served."""
    root = initialised(tmp_path / "repo")
    installed = run_cli(root, "install-hooks", "claude-code", "--served")
    assert installed.code == 0, installed.stderr
    claimed = run_cli(root, "--agent", "reviewer", "claim", "CLAUDE.md", "--strict", "--json")
    assert claimed.code == 0, claimed.stderr
    return root


@pytest.fixture
def daemon(repo: Path) -> Iterator[Streamed]:
    process = Streamed(repo, "watch", "--json")
    try:
        process.wait_for(lambda o: o["action"] == "serving")
        yield process
    finally:
        process.close()


def edit_claude_md(one: Session, log: Path) -> tuple[str, str]:
    """The session Reads then Edits CLAUDE.md: the Edit's result and Claude Code's log."""
    claude_md = str(one.root / "CLAUDE.md")
    edit = {"file_path": claude_md, "old_string": LINE, "new_string": f"{LINE} (edited)"}
    steps: list[Step] = [Tool("Read", {"file_path": claude_md}), Tool("Edit", edit), Text("Done.")]
    with FakeModel(steps) as model:
        finish(one.start(model, "--session-id", one.id, "--debug-file", str(log)))
    _, edited = model.calls()
    assert edited.error, edited
    return edited.result, log.read_text()


def test_the_served_gate_denies_and_with_the_daemon_killed_the_command_hook_does(
    repo: Path, tmp_path: Path, daemon: Streamed
) -> None:
    config = gateconfig.load(str(repo / ".memkeeper"))
    assert config is not None
    url = config.url("claude-code")
    before = (repo / "CLAUDE.md").read_bytes()

    served, log = edit_claude_md(session(repo, tmp_path), tmp_path / "served.log")
    assert "reviewer" in served, served  # the refusal names the claim's holder
    assert f"Hook PreToolUse ({url}) returned permissionDecision: deny" in log
    assert "Hook PreToolUse (sh -c" not in log  # the command hook stepped aside, said nothing

    daemon.proc.send_signal(signal.SIGKILL)  # no clean stop: the lock goes with the process
    daemon.proc.wait(timeout=10)
    unserved, log = edit_claude_md(session(repo, tmp_path), tmp_path / "unserved.log")
    assert "reviewer" in unserved, unserved  # the command hook's deny
    assert f"HTTP hook error: connect ECONNREFUSED 127.0.0.1:{config.port}" in log  # (allowed)
    assert "Hook PreToolUse (sh -c" in log
    assert (repo / "CLAUDE.md").read_bytes() == before
