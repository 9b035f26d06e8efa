"""The command ``install-hooks`` writes to run each agent's gate: one portable ``sh -c`` line
that reads the same to every shell, finds memkeeper on PATH or in the project's .venv, and
where it finds none answers the agent's own ask or deny, saying what to do."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memkeeper.fs.agentfiles import AGENTS
from memkeeper.fs.locks import file_lock
from memkeeper.install.command import fallback, gate_command, missing


@pytest.mark.parametrize("agent", AGENTS)
def test_each_command_reads_the_same_to_every_shell(agent: str) -> None:
    """One single-quoted script with no quote or backslash inside (fish's single quotes
    treat both specially), and no ``$NAME`` Gemini would substitute."""
    command = gate_command(agent, "preToolUse" if agent == "copilot" else None)
    script, answer = re.fullmatch(r"sh -c '([^']*)' memkeeper '([^']*)'", command).groups()  # type: ignore[union-attr]
    assert "\\" not in script + answer
    assert json.loads(answer) == json.loads(fallback(agent))
    assert f'exec "$m" hook {agent}' in script
    assert not re.search(r"\$(?:GEMINI|CLAUDE)_PROJECT_DIR\b", script)


def missing_answer(agent: str, payload: dict[str, Any], event: str | None = None) -> str:
    """The command's answer with no memkeeper on PATH and none in the project's .venv."""
    done = subprocess.run(
        ["/bin/sh", "-c", gate_command(agent, event)],
        cwd="/",
        input=json.dumps(payload),
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_deny_says_what_to_do_and_where_the_gate_is_set_up() -> None:
    assert missing("codex").endswith(
        "Ask the user to install memkeeper, then restart Codex (the gate is set up in "
        ".codex/hooks.json)."
    )
    assert "stops the task" in missing("cline")


# -- stepping aside while memkeeper watch serves the gate ----------------------------------------


def guarded_answer(project: str, session: str) -> str:
    """The guarded command's answer to a PreToolUse, with memkeeper missing (so running the
    gate prints the ask)."""
    done = subprocess.run(
        ["/bin/sh", "-c", gate_command("claude-code", guarded=True)],
        cwd="/",
        input=json.dumps({"hook_event_name": "PreToolUse"}),
        env={
            "PATH": "/usr/bin:/bin",
            "CLAUDE_PROJECT_DIR": project,
            "CLAUDE_CODE_SESSION_ID": session,
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.peer("sh", "flock")
def test_the_command_steps_aside_only_in_claude_code_while_the_lock_is_held(
    tmp_path: Path,
) -> None:
    home = tmp_path / ".memkeeper"
    home.mkdir()
    project, runs = str(tmp_path), "permissionDecision"
    assert runs in guarded_answer(project, "s1")  # no gate.json: not configured here
    (home / "gate.json").write_text("{}")
    assert runs in guarded_answer(project, "s1")  # configured, but no daemon holds the lock
    with file_lock(str(home / "gate.lock")):
        assert guarded_answer(project, "s1") == ""  # the daemon serves: step aside
        assert runs in guarded_answer(project, "")  # not Claude Code (Cursor, Copilot)
    assert runs in guarded_answer(project, "s1")  # the daemon gone: the gate again
