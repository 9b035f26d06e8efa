"""``install-hooks`` and ``uninstall-hooks``: the git hook script, the portable Claude Code
command, and the plan — every file computed before any is written, each agent's files
added to and taken out of again, a Cline hook of the user's kept and put back, a file
memkeeper created deleted once nothing else is in it."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import AGENTS
from memkeeper.install import scripts
from memkeeper.install.hooks import (
    CLAUDE_COMMAND,
    agent_names,
    install,
    uninstall,
)


def fake_git(args: Any, cwd: Path) -> tuple[int, bytes]:
    return 0, b".git/hooks\n"


def no_git(args: Any, cwd: Path) -> tuple[int, bytes]:
    return 128, b""


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# -- naming the agents ----------------------------------------------------------------------------


def test_all_names_every_agent_once_in_order() -> None:
    assert agent_names(["all"]) == list(AGENTS)
    assert agent_names(["cursor", "codex", "cursor"]) == ["codex", "cursor"]
    assert agent_names([]) == []


def test_an_unknown_agent_is_a_usage_error_naming_the_known_ones() -> None:
    with pytest.raises(Invalid) as caught:
        agent_names(["codex", "vim"])
    assert caught.value.message.startswith("unknown agent 'vim' — name one or more of claude-code")


# -- installing and uninstalling agents -----------------------------------------------------------


def test_without_agents_only_the_git_hooks_are_installed(tmp_path: Path) -> None:
    done = install(tmp_path, python="/py", run=fake_git)
    assert done["agents"] == {}
    assert set(files(tmp_path)) == {".git/hooks/pre-commit", ".git/hooks/pre-push"}


def test_install_creates_each_agents_files_and_uninstall_deletes_them(tmp_path: Path) -> None:
    install(tmp_path, AGENTS, mcp=True, python="/py", run=fake_git)
    made = set(files(tmp_path)) - {".git/hooks/pre-commit", ".git/hooks/pre-push"}
    assert made == {
        ".claude/settings.json",
        ".mcp.json",
        ".codex/hooks.json",
        ".codex/config.toml",
        ".gemini/settings.json",
        ".github/hooks/memkeeper.json",
        ".vscode/mcp.json",
        ".clinerules/hooks/PreToolUse",
        ".clinerules/hooks/PostToolUse",
        ".clinerules/hooks/TaskStart",
        ".clinerules/hooks/TaskResume",
        ".clinerules/hooks/UserPromptSubmit",
        ".cursor/hooks.json",
        ".cursor/mcp.json",
    }
    assert os.access(tmp_path / ".clinerules/hooks/PreToolUse", os.X_OK)
    done = uninstall(tmp_path, run=fake_git)
    assert files(tmp_path) == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git"]  # directories pruned too
    assert done["git_hook_removed"] is True
    assert all(f.get("deleted") for a in done["agents"].values() for f in a["hooks"])


def test_a_file_holding_more_than_memkeepers_entries_is_kept(tmp_path: Path) -> None:
    install(tmp_path, ["cursor"], python="/py", run=fake_git)
    hooks = tmp_path / ".cursor/hooks.json"
    added = hooks.read_text().replace('"version": 1,', '"version": 1,\n  "mine": true,')
    hooks.write_text(added)
    done = uninstall(tmp_path, ["cursor"], run=fake_git)
    assert hooks.read_text() == '{\n  "version": 1,\n  "mine": true\n}\n'
    assert done["agents"]["cursor"]["hooks"] == [{"path": ".cursor/hooks.json", "changed": True}]


def test_uninstalling_what_is_not_there_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex/hooks.json").write_text("{}\n")
    done = uninstall(tmp_path, ["codex", "cline"], run=no_git)
    assert files(tmp_path) == {".codex/hooks.json": b"{}\n"}  # not memkeeper's: kept
    assert done["git_hook"] is None
    assert done["agents"]["cline"]["hooks"][0] == {
        "path": ".clinerules/hooks/PreToolUse",
        "changed": False,
    }
    everything = uninstall(tmp_path, run=no_git)  # outside git: no git hook to take out
    assert everything["git_hook"] is None
    assert list(everything["agents"]) == list(AGENTS)


def test_a_file_memkeeper_cannot_edit_stops_everything_before_anything_is_written(
    tmp_path: Path,
) -> None:
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor/hooks.json").write_text('{"hooks": \n')
    with pytest.raises(Invalid) as caught:
        install(tmp_path, AGENTS, python="/py", run=fake_git)
    assert ".cursor/hooks.json:2:1: not valid JSON" in caught.value.message
    assert files(tmp_path) == {".cursor/hooks.json": b'{"hooks": \n'}


def test_a_symlinked_settings_file_is_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "dotfiles.json"
    elsewhere.write_text("{}\n")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").symlink_to(elsewhere)
    with pytest.raises(Invalid, match=r"\.claude/settings\.json: is a symlink"):
        install(tmp_path, ["claude-code"], python="/py", run=fake_git)
    assert elsewhere.read_text() == "{}\n"


def test_a_users_cline_hook_is_kept_as_legacy_and_put_back(tmp_path: Path) -> None:
    hooks = tmp_path / ".clinerules/hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text("#!/bin/sh\necho '{}'\n")
    (hooks / "PreToolUse").chmod(0o700)
    first = install(tmp_path, ["cline"], python="/py", run=fake_git)
    second = install(tmp_path, ["cline"], python="/py", run=fake_git)
    assert (hooks / "PreToolUse.legacy").read_text() == "#!/bin/sh\necho '{}'\n"
    assert (hooks / "PreToolUse").read_text() == scripts.script("cline", "PreToolUse")
    assert first["agents"]["cline"]["hooks"][0]["kept"] == ".clinerules/hooks/PreToolUse.legacy"
    assert second["agents"]["cline"]["hooks"][0] == {
        "path": ".clinerules/hooks/PreToolUse",
        "changed": False,
    }
    done = uninstall(tmp_path, ["cline"], run=fake_git)
    assert sorted(p.name for p in hooks.iterdir()) == ["PreToolUse"]
    assert (hooks / "PreToolUse").read_text() == "#!/bin/sh\necho '{}'\n"
    assert (hooks / "PreToolUse").stat().st_mode & 0o777 == 0o700
    assert done["agents"]["cline"]["hooks"][0]["restored"] == ".clinerules/hooks/PreToolUse.legacy"


def test_two_hooks_of_the_users_in_clines_place_are_refused(tmp_path: Path) -> None:
    hooks = tmp_path / ".clinerules/hooks"
    hooks.mkdir(parents=True)
    for name in ("PostToolUse", "PostToolUse.legacy"):
        (hooks / name).write_text("#!/bin/sh\n")
    with pytest.raises(Invalid, match=r"PostToolUse\.legacy are both there"):
        install(tmp_path, ["cline"], python="/py", run=fake_git)


def test_clinerules_as_a_file_is_refused_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / ".clinerules").write_text("Use tabs.\n")
    with pytest.raises(Invalid, match=r"\.clinerules: is a file — Cline's hooks live in"):
        install(tmp_path, ["cline"], python="/py", run=fake_git)
    assert (tmp_path / ".clinerules").read_text() == "Use tabs.\n"


# -- the Claude Code settings (the --claude-code days' keys) --------------------------------------


def absolute_paths(command: str) -> set[str]:
    """The absolute paths a shell command names (not ones under a variable, like
    ``"${CLAUDE_PROJECT_DIR:-…}/…"``)."""
    return set(re.findall(r"(?:^|[\s'\"=>|;(])(/[^\s'\";)]*)", command))


def test_the_settings_name_no_path_of_this_machine_even_off_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no memkeeper on PATH
    done = install(tmp_path, ["claude-code"], python=sys.executable, run=fake_git)
    text = (tmp_path / ".claude" / "settings.json").read_text()
    settings = json.loads(text)
    commands = {
        h["command"]
        for e in ("PreToolUse", "PostToolUse")
        for h in settings["hooks"][e][0]["hooks"]
    }
    assert commands == {CLAUDE_COMMAND} == {done["claude_command"]}
    assert done["settings_changed"] is True
    for here in (sys.executable, str(Path(sys.executable).parent), str(tmp_path), os.getcwd()):
        assert here not in text
    assert absolute_paths(CLAUDE_COMMAND) == {"/dev/null"}
    assert 'exec "$m" hook claude-code;' in CLAUDE_COMMAND


# -- someone else writing an agent's file at the same moment ---------------------------------------


USERS = '{\n  "permissions": {"allow": ["Bash(make:*)"]}\n}\n'
SAVED = '{\n  "permissions": {"allow": ["Bash(make:*)", "Bash(git:*)"]}\n}\n'


def test_a_settings_file_saved_after_it_was_read_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.errors import EnvironmentFailure
    from memkeeper.install import plan as installplan

    settings = tmp_path / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text(USERS)
    real = installplan.Plan.apply

    def editor_saves_first(plan: installplan.Plan) -> None:
        settings.write_text(SAVED)  # the user's editor, between memkeeper's read and write
        real(plan)

    monkeypatch.setattr(installplan.Plan, "apply", editor_saves_first)
    with pytest.raises(EnvironmentFailure, match="changed on disk while memkeeper"):
        install(tmp_path, ["claude-code"], python="/py", run=fake_git)
    assert settings.read_text() == SAVED


def test_a_save_that_lands_after_the_check_is_caught_at_the_replace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.errors import EnvironmentFailure
    from memkeeper.install import plan as installplan

    settings = tmp_path / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text(USERS)
    real = installplan._apply

    def editor_saves_during(root: Path, edit: installplan.Edit) -> None:
        if edit.rel == ".claude/settings.json":
            settings.write_text(SAVED)
        real(root, edit)

    monkeypatch.setattr(installplan, "_apply", editor_saves_during)
    with pytest.raises(EnvironmentFailure, match=r"\.claude/settings\.json: changed on disk"):
        install(tmp_path, ["claude-code"], python="/py", run=fake_git)
    assert settings.read_text() == SAVED


# -- what installing loads ---------------------------------------------------------------------


def test_uninstalling_from_broken_json_never_says_to_install(tmp_path: Path) -> None:
    install(tmp_path, ["cursor"], python="/py", run=fake_git)
    hooks = tmp_path / ".cursor/hooks.json"
    hooks.write_text(hooks.read_text()[:-3])
    before = hooks.read_bytes()
    with pytest.raises(Invalid) as caught:
        uninstall(tmp_path, ["cursor"], run=fake_git)
    assert "not valid JSON" in caught.value.message
    assert "install-hooks" not in caught.value.message
    assert caught.value.message.endswith("fix it, then run the same memkeeper command again")
    assert hooks.read_bytes() == before
