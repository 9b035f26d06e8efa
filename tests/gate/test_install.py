"""``install-hooks``: the hook script, the settings.json merge, and the portable command
the committed settings carry."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memkeeper.errors import Invalid
from memkeeper.gate.install import (
    CLAUDE_COMMAND,
    MARKER,
    MATCHER,
    MISSING,
    hook_script,
    install,
    install_git_hook,
    merge_settings,
)
from tests.conftest import MEMKEEPER

COMMAND = "memkeeper hook claude-code"


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        group
        for group in settings["hooks"][event]
        if any("hook claude-code" in h["command"] for h in group["hooks"])
    ]


def test_settings_are_created_with_both_hooks() -> None:
    settings = json.loads(merge_settings(None, COMMAND))
    for event in ("PreToolUse", "PostToolUse"):
        assert settings["hooks"][event] == [
            {"matcher": MATCHER, "hooks": [{"type": "command", "command": COMMAND}]}
        ]


def test_merging_keeps_every_other_key_and_hook_and_the_indentation() -> None:
    text = (
        '{\n    "model": "opus",\n    "hooks": {\n        "PreToolUse": [\n'
        '            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}\n'
        '        ],\n        "Stop": [{"hooks": [{"type": "command", "command": "say"}]}]\n'
        "    },\n"
        '    "permissions": {"deny": ["Read(.env)"]}\n}\n'
    )
    merged = merge_settings(text, COMMAND)
    settings = json.loads(merged)
    assert list(settings) == ["model", "hooks", "permissions"]
    assert settings["permissions"] == {"deny": ["Read(.env)"]}
    assert settings["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "say"}]}]
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "lint"
    assert len(ours(settings, "PreToolUse")) == len(ours(settings, "PostToolUse")) == 1
    assert '\n    "model"' in merged
    assert merged.endswith("}\n")


def test_merging_again_changes_nothing() -> None:
    once = merge_settings('{"hooks": {}}', COMMAND)
    assert merge_settings(once, COMMAND) == once


def test_an_entry_already_there_is_updated_in_place_not_repeated() -> None:
    old = merge_settings(None, "/old/venv/bin/memkeeper hook claude-code")
    settings = json.loads(merge_settings(old, COMMAND))
    assert [g["hooks"][0]["command"] for g in ours(settings, "PreToolUse")] == [COMMAND]


def test_tabs_stay_tabs() -> None:
    assert '\n\t"hooks"' in merge_settings('{\n\t"model": "x"\n}\n', COMMAND)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"hooks": [}', "settings.json:1:12: not valid JSON"),
        ("[]", "not a JSON object"),
        ('{"hooks": []}', '"hooks" is not an object'),
        ('{"hooks": {"PreToolUse": {}}}', '"hooks".PreToolUse is not a list'),
    ],
)
def test_settings_memkeeper_cannot_merge_are_a_usage_error(text: str, says: str) -> None:
    with pytest.raises(Invalid) as caught:
        merge_settings(text, COMMAND, ".claude/settings.json")
    assert says in caught.value.message


def fake_git(args: Any, cwd: Path) -> tuple[int, bytes]:
    return 0, b".git/hooks\n"


def absolute_paths(command: str) -> set[str]:
    """The absolute paths a shell command names (not ones under a variable, like
    ``"$CLAUDE_PROJECT_DIR/…"``)."""
    return set(re.findall(r"(?:^|[\s'\"=>|;(])(/[^\s'\";)]*)", command))


def test_the_settings_name_no_path_of_this_machine_even_off_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no memkeeper on PATH
    done = install(tmp_path, claude_code=True, python=sys.executable, run=fake_git)
    text = (tmp_path / ".claude" / "settings.json").read_text()
    settings = json.loads(text)
    commands = {
        h["command"] for e in ("PreToolUse", "PostToolUse") for h in ours(settings, e)[0]["hooks"]
    }
    assert commands == {CLAUDE_COMMAND} == {done["claude_command"]}
    for here in (sys.executable, str(Path(sys.executable).parent), str(tmp_path), os.getcwd()):
        assert here not in text
    assert absolute_paths(CLAUDE_COMMAND) == {"/dev/null"}
    assert CLAUDE_COMMAND.endswith('exec "$m" hook claude-code')


def run_command(stdin: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The settings' command, run as Claude Code runs it: by a shell, the hook's JSON in."""
    return subprocess.run(
        ["/bin/sh", "-c", CLAUDE_COMMAND],
        input=stdin,
        env={"PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


PRE = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}})


@pytest.mark.e2e
def test_without_memkeeper_each_tool_call_asks_instead_of_the_gate_vanishing() -> None:
    done = run_command(PRE)
    assert done.returncode == 0
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert (out["permissionDecision"], out["permissionDecisionReason"]) == ("ask", MISSING)
    post = run_command(PRE.replace("PreToolUse", "PostToolUse"))
    assert (post.returncode, post.stdout) == (0, "")


@pytest.mark.e2e
def test_memkeeper_is_found_on_path_or_in_the_projects_venv(tmp_path: Path) -> None:
    on_path = run_command(PRE, PATH=f"{Path(MEMKEEPER).parent}:/usr/bin:/bin")
    assert (on_path.returncode, on_path.stdout, on_path.stderr) == (0, "", "")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "memkeeper").symlink_to(MEMKEEPER)
    in_venv = run_command(PRE, CLAUDE_PROJECT_DIR=str(tmp_path))
    assert (in_venv.returncode, in_venv.stdout, in_venv.stderr) == (0, "", "")


def test_the_hook_script_names_the_interpreter_and_runs_the_legacy_hook_first() -> None:
    script = hook_script("/my venv/bin/python")
    assert script.startswith("#!/bin/sh\n")
    assert MARKER in script
    assert "python='/my venv/bin/python'" in script
    assert script.index('pre-commit.legacy" "$@" || exit $?') < script.index(
        "-m memkeeper check --staged"
    )


def test_a_foreign_hook_is_kept_as_legacy_once_and_ours_is_rewritten_in_place(
    tmp_path: Path,
) -> None:
    (tmp_path / "pre-commit").write_text("#!/bin/sh\necho theirs\n")
    first = install_git_hook(tmp_path, "/py")
    second = install_git_hook(tmp_path, "/py")
    assert (first["moved_existing_hook"], first["git_hook_changed"]) == (True, True)
    assert (second["moved_existing_hook"], second["git_hook_changed"]) == (False, False)
    assert (tmp_path / "pre-commit.legacy").read_text() == "#!/bin/sh\necho theirs\n"
    assert (tmp_path / "pre-commit").read_text() == hook_script("/py")
    assert (tmp_path / "pre-commit").stat().st_mode & 0o111
    third = install_git_hook(tmp_path, "/other/py")
    assert third["git_hook_changed"]
    assert not third["moved_existing_hook"]
    assert (tmp_path / "pre-commit.legacy").read_text() == "#!/bin/sh\necho theirs\n"
