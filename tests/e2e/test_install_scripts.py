"""What install-hooks writes, run as the agents run it: the gate's command through /bin/sh —
its answer when memkeeper is missing from the machine, and memkeeper found on PATH or in the
project's virtual environment."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memkeeper.install.command import fallback, missing
from memkeeper.install.hooks import CLAUDE_COMMAND, MISSING
from tests.conftest import MEMKEEPER
from tests.install.test_command import missing_answer


@pytest.mark.parametrize(
    ("agent", "pre", "post", "verdict"),
    [
        ("claude-code", "PreToolUse", "PostToolUse", "ask"),
        ("codex", "PreToolUse", "PostToolUse", "deny"),
        ("gemini", "BeforeTool", "AfterTool", "deny"),
        ("cursor", "preToolUse", "afterFileEdit", "deny"),
        ("cursor", "beforeShellExecution", "postToolUse", "deny"),
    ],
)
def test_without_memkeeper_a_pre_tool_call_gets_the_agents_ask_or_deny(
    agent: str, pre: str, post: str, verdict: str
) -> None:
    answer = missing_answer(agent, {"hook_event_name": pre, "tool_name": "x"})
    assert json.loads(answer) == json.loads(fallback(agent))
    assert verdict in answer
    assert "memkeeper is not installed on this machine" in answer
    after = missing_answer(agent, {"hook_event_name": post, "tool_name": "x"})
    assert after == ("{}\n" if agent == "cursor" else "")  # Cursor: always JSON


def run_command(stdin: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The settings' command, run as Claude Code runs it: by a shell, the hook's JSON in."""
    return subprocess.run(
        ["/bin/sh", "-c", CLAUDE_COMMAND],
        input=stdin,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


PRE = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}})


def test_without_memkeeper_copilot_asks_before_and_says_nothing_after() -> None:
    payload = {"toolName": "bash", "toolArgs": {"command": "ls"}}
    assert json.loads(missing_answer("copilot", payload, "preToolUse")) == {
        "permissionDecision": "ask",
        "permissionDecisionReason": missing("copilot"),
    }
    assert missing_answer("copilot", payload, "postToolUse") == ""


def test_without_memkeeper_each_tool_call_asks_instead_of_the_gate_vanishing(
    tmp_path: Path,
) -> None:
    done = run_command(PRE, tmp_path)
    assert done.returncode == 0
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert (out["permissionDecision"], out["permissionDecisionReason"]) == ("ask", MISSING)
    post = run_command(PRE.replace("PreToolUse", "PostToolUse"), tmp_path)
    assert (post.returncode, post.stdout) == (0, "")


def test_memkeeper_is_found_on_path_or_in_the_projects_venv(tmp_path: Path) -> None:
    on_path = run_command(PRE, tmp_path, PATH=f"{Path(MEMKEEPER).parent}:/usr/bin:/bin")
    assert (on_path.returncode, on_path.stdout, on_path.stderr) == (0, "", "")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "memkeeper").symlink_to(MEMKEEPER)
    in_venv = run_command(PRE, Path("/"), CLAUDE_PROJECT_DIR=str(tmp_path))
    assert (in_venv.returncode, in_venv.stdout, in_venv.stderr) == (0, "", "")
    subdir = tmp_path / "src"
    subdir.mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    from_git = subprocess.run(  # no CLAUDE_PROJECT_DIR (Copilot, Cursor): the worktree's top
        ["/bin/sh", "-c", CLAUDE_COMMAND],
        input=PRE,
        cwd=subdir,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (from_git.returncode, from_git.stdout, from_git.stderr) == (0, "", "")
