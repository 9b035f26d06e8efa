"""``memkeeper doctor`` as a process, and the user-level gate ``--fix`` writes run by ``sh`` as
Claude Code runs it: silent where the session's directory has the project's gate (that one
answers), memkeeper's refusal in a subdirectory or above the repository, silent where
memkeeper is missing; and the login shell asked for real."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from memkeeper.doctor import userhook
from memkeeper.doctor.facts import login_memkeeper
from tests.conftest import MEMKEEPER, run_cli
from tests.e2e.hooktables import initialised


def write_call(root: Path, cwd: Path) -> str:
    tool_input = {"command": f"printf x > {root / 'CLAUDE.md'}"}
    payload = {"session_id": "s1", "cwd": str(cwd), "hook_event_name": "PreToolUse"}
    return json.dumps({**payload, "tool_name": "Bash", "tool_input": tool_input})


def user_gate(line: str, started: Path, home: Path, stdin: str, path: str) -> str:
    env = {"PATH": path, "HOME": str(home), "CLAUDE_PROJECT_DIR": str(started)}
    done = subprocess.run(
        ["sh", "-c", line], cwd=started, env=env, input=stdin, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_user_gate_defers_at_the_root_and_refuses_elsewhere(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    home = tmp_path / "home"
    home.mkdir()
    assert run_cli(root, "install-hooks", "claude-code").code == 0
    line = userhook.command("claude-code", MEMKEEPER)
    system = "/usr/bin:/bin"  # memkeeper only by the path the command names
    assert user_gate(line, root, home, write_call(root, root), system) == ""
    for started in (root / "src", tmp_path):
        out = user_gate(line, started, home, write_call(root, started), system)
        answer = json.loads(out)["hookSpecificOutput"]
        assert answer["permissionDecision"] == "deny", started
        assert "CLAUDE.md is section-owned" in answer["permissionDecisionReason"]
    missing = userhook.command("claude-code", str(tmp_path / "gone" / "memkeeper"))
    assert user_gate(missing, root / "src", home, write_call(root, root), system) == ""


def test_doctor_fix_then_doctor_again_as_processes(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(Path(MEMKEEPER).parent), "/usr/bin:/bin"]),
    }
    assert run_cli(root, "install-hooks", "claude-code", "--mcp").code == 0
    first = run_cli(root, "doctor", env=env)
    assert first.code == 6
    assert "fix: memkeeper doctor --fix claude-code" in first.stderr
    fixed = run_cli(root, "doctor", "--fix", env=env)
    assert fixed.code == 0, fixed.stderr
    assert run_cli(root, "doctor", env=env).code == 0
    line = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]["PreToolUse"][0]
    assert line["hooks"][0]["command"] == userhook.command("claude-code", MEMKEEPER)


def test_a_login_shell_is_asked_where_it_finds_memkeeper(tmp_path: Path) -> None:
    finds, finds_nothing = tmp_path / "finds", tmp_path / "nothing"
    finds.write_text('#!/bin/sh\n[ "$1" = -lc ] && echo /opt/tools/bin/memkeeper\n')
    finds_nothing.write_text("#!/bin/sh\nexit 1\n")
    for shell in (finds, finds_nothing):
        shell.chmod(0o755)
    assert login_memkeeper(str(finds), tmp_path) == "/opt/tools/bin/memkeeper"
    assert login_memkeeper(str(finds_nothing), tmp_path) is None
    assert login_memkeeper(str(tmp_path / "no-such-shell"), tmp_path) is None
