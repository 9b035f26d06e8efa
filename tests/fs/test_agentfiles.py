"""Which agents' gates a project has installed, and the warning ``check`` gives when none of
them can start on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from memkeeper.fs.agentfiles import installed_gates, memkeeper_found, unrunnable_gates


@pytest.fixture
def off_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


def test_a_gate_is_a_file_of_the_agent_that_runs_memkeeper_hook_for_it(tmp_path: Path) -> None:
    write(tmp_path, ".codex/hooks.json", '{"command": "memkeeper hook codex"}')
    write(tmp_path, ".cursor/hooks.json", '{"command": "memkeeper hook codex"}')  # not Cursor's
    write(tmp_path, ".clinerules/hooks/PostToolUse", "#!/bin/sh\n# memkeeper\nx hook cline\n")
    assert installed_gates(tmp_path) == [
        ("codex", ".codex/hooks.json"),
        ("cline", ".clinerules/hooks/PostToolUse"),
    ]


@pytest.mark.usefixtures("off_path")
def test_an_installed_gate_without_memkeeper_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, ".gemini/settings.json", '{"command": "memkeeper hook gemini"}')
    assert not memkeeper_found(tmp_path)
    assert unrunnable_gates(tmp_path) == [
        ".gemini/settings.json: the Gemini CLI gate cannot run on this machine — it runs "
        "memkeeper, which is neither on PATH nor at .venv/bin/memkeeper; install memkeeper"
    ]


@pytest.mark.usefixtures("off_path")
def test_the_projects_venv_is_enough_and_no_gate_no_warning(tmp_path: Path) -> None:
    assert unrunnable_gates(tmp_path) == []
    write(tmp_path, ".claude/settings.json", '{"command": "memkeeper hook claude-code"}')
    write(tmp_path, ".venv/bin/memkeeper", "#!/bin/sh\n")
    (tmp_path / ".venv/bin/memkeeper").chmod(0o755)
    assert unrunnable_gates(tmp_path) == []
