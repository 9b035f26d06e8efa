"""Claude Code's user-level gate as ``doctor --fix`` writes it: added to the user's settings
with every other byte kept, unchanged by a second run, brought up to date in place, refused
on a symlink, its command holding nothing that would break its quoting; and told apart as
memkeeper's gate by what reads the settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memkeeper.doctor import userhook
from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import gate_pattern
from memkeeper.gate.jsonc import blank

PROGRAM = "/opt/tools/bin/memkeeper"


def settings(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def test_the_gate_is_added_keeping_the_users_settings(tmp_path: Path) -> None:
    stop = '{"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}'
    mine = f'{{\n  // my model\n  "model": "opus",\n  "hooks": {stop}\n}}\n'
    settings(tmp_path).parent.mkdir()
    settings(tmp_path).write_text(mine)
    done = userhook.install(tmp_path, "claude-code", PROGRAM)
    assert done["changed"] is True
    assert done["path"] == str(settings(tmp_path))
    text = settings(tmp_path).read_text()
    assert text.startswith('{\n  // my model\n  "model": "opus",')
    assert '"say done"' in text
    hooks = json.loads(blank(text))["hooks"]
    for event in ("PreToolUse", "PostToolUse"):
        assert hooks[event][0]["hooks"][0]["command"] == userhook.command("claude-code", PROGRAM)


def test_a_second_fix_changes_nothing(tmp_path: Path) -> None:
    assert userhook.install(tmp_path, "claude-code", PROGRAM)["created"] is True
    before = settings(tmp_path).read_bytes()
    assert userhook.install(tmp_path, "claude-code", PROGRAM)["changed"] is False
    assert settings(tmp_path).read_bytes() == before


def test_a_moved_memkeeper_is_updated_in_place(tmp_path: Path) -> None:
    userhook.install(tmp_path, "claude-code", PROGRAM)
    assert userhook.install(tmp_path, "claude-code", "/elsewhere/memkeeper")["changed"] is True
    text = settings(tmp_path).read_text()
    assert "/elsewhere/memkeeper" in text
    assert PROGRAM not in text
    assert len(json.loads(text)["hooks"]["PreToolUse"]) == 1


def test_a_symlinked_settings_file_is_refused_unchanged(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text("{}\n")
    settings(tmp_path).parent.mkdir()
    settings(tmp_path).symlink_to(real)
    with pytest.raises(Invalid, match="symlink") as caught:
        userhook.install(tmp_path, "claude-code", PROGRAM)
    assert real.read_text() == "{}\n"
    assert caught.value.message.startswith(f"{settings(tmp_path)}: is a symlink")


def test_a_settings_file_that_is_not_json_is_named_by_its_path_and_left_alone(
    tmp_path: Path,
) -> None:
    settings(tmp_path).parent.mkdir()
    settings(tmp_path).write_text('{"model": "opus",\n')
    with pytest.raises(Invalid) as caught:
        userhook.install(tmp_path, "claude-code", PROGRAM)
    assert caught.value.message.startswith(f"{settings(tmp_path)}:2:1: not valid JSON")
    assert caught.value.fields["path"] == str(settings(tmp_path))
    assert settings(tmp_path).read_text() == '{"model": "opus",\n'


def test_the_command_runs_the_gate_and_defers_to_the_projects() -> None:
    line = userhook.command("claude-code", PROGRAM)
    assert gate_pattern("claude-code").search(line)
    script = line.split("'")[1]
    assert "'" not in script
    assert "\\" not in script
    assert f'm="{PROGRAM}"' in script
    assert '"$d" != "$HOME"' in script  # the home's own settings are this file, not a project's


@pytest.mark.parametrize("program", [None, "/odd'path/memkeeper", '/odd"path/memkeeper', "/a$b/m"])
def test_a_path_that_cannot_be_quoted_is_left_out(program: str | None) -> None:
    script = userhook.command("claude-code", program).split("'")[1]
    assert "m=$(command -v memkeeper) || m=;" in script


def test_geminis_user_gate_is_named_apart_and_reads_no_variable_gemini_rewrites(
    tmp_path: Path,
) -> None:
    done = userhook.install(tmp_path, "gemini", PROGRAM)
    assert done["path"] == str(tmp_path / ".gemini" / "settings.json")
    hooks = json.loads((tmp_path / ".gemini" / "settings.json").read_text())["hooks"]
    names = [hooks[event][0]["hooks"][0]["name"] for event in ("BeforeTool", "AfterTool")]
    assert names == ["memkeeper-user-BeforeTool", "memkeeper-user-AfterTool"]
    line = hooks["BeforeTool"][0]["hooks"][0]["command"]
    assert gate_pattern("gemini").search(line)
    assert "PROJECT_DIR" not in line
    assert 'd="$(pwd)"' in line
    assert '"$d/.gemini/settings.json"' in line
