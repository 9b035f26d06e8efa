"""``install-hooks``' pure parts: the hook script and the settings.json merge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memkeeper.errors import Invalid
from memkeeper.gate.install import (
    MARKER,
    MATCHER,
    claude_command,
    hook_script,
    install_git_hook,
    merge_settings,
)

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


def test_the_command_is_plain_memkeeper_when_it_is_on_path() -> None:
    assert claude_command("/v/bin/python", which=lambda name: "/usr/bin/memkeeper") == COMMAND
    off_path = claude_command("/my venv/bin/python", which=lambda name: None)
    assert off_path == "'/my venv/bin/python' -P -m memkeeper hook claude-code"


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
