"""What ``install-hooks`` merges into each agent's JSON hook file: the entries, each running
the gate, added to (and taken out of) the user's JSON with every other byte kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import AGENTS
from memkeeper.gate import agents, jsonc
from memkeeper.install import jsonhooks
from memkeeper.install.command import gate_command
from memkeeper.install.jsonhooks import add_hooks, json_hooks, remove_hooks

JSON_AGENTS = [a for a in AGENTS if a != "cline"]
CLAUDE = json_hooks("claude-code")


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        group
        for group in settings["hooks"][event]
        if any("hook claude-code" in h["command"] for h in group["hooks"])
    ]


# -- hooks merged into the user's JSON ---------------------------------------------------------


def test_settings_are_created_with_both_hooks() -> None:
    settings = json.loads(add_hooks(None, CLAUDE))
    for event, more in (("PreToolUse", ""), ("PostToolUse", "|Read")):
        assert settings["hooks"][event] == [
            {
                "matcher": "Edit|MultiEdit|Write|Bash|PowerShell" + more,
                "hooks": [
                    {"type": "command", "command": gate_command("claude-code", guarded=True)}
                ],
            }
        ]


def test_merging_keeps_every_other_key_and_hook_and_the_indentation() -> None:
    text = (
        '{\n    "model": "opus",\n    "hooks": {\n        "PreToolUse": [\n'
        '            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}\n'
        '        ],\n        "Stop": [{"hooks": [{"type": "command", "command": "say"}]}]\n'
        "    },\n"
        '    "permissions": {"deny": ["Read(.env)"]}\n}\n'
    )
    merged = add_hooks(text, CLAUDE)
    settings = json.loads(merged)
    assert list(settings) == ["model", "hooks", "permissions"]
    assert settings["permissions"] == {"deny": ["Read(.env)"]}
    assert settings["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "say"}]}]
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "lint"
    assert len(ours(settings, "PreToolUse")) == len(ours(settings, "PostToolUse")) == 1
    assert merged.startswith(text[: text.index("}\n")])  # what was there is there, as it was
    assert '\n            {\n                "matcher": "Edit' in merged
    assert remove_hooks(merged, CLAUDE) == text


@pytest.mark.parametrize("agent", JSON_AGENTS)
def test_merging_again_changes_nothing_and_removing_gives_the_text_back(agent: str) -> None:
    spec = json_hooks(agent)
    text = '{\n  // theirs\n  "hooks": {"Other": [{"command": "x"}]}\n}\n'
    once = add_hooks(text, spec)
    assert add_hooks(once, spec) == once
    assert remove_hooks(once, spec) == text
    created = add_hooks(None, spec)
    assert remove_hooks(created, spec) == jsonhooks.start(None, spec.skeleton)


@pytest.mark.parametrize(
    ("agent", "events", "command_key"),
    [
        ("codex", {"PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit"}, "command"),
        ("gemini", {"BeforeTool", "AfterTool", "SessionStart", "BeforeAgent"}, "command"),
        ("copilot", {"preToolUse", "postToolUse"}, "bash"),
        (
            "cursor",
            {"preToolUse", "beforeShellExecution", "postToolUse", "afterFileEdit"},
            "command",
        ),
    ],
)
def test_each_agent_gets_its_documented_shape(
    agent: str, events: set[str], command_key: str
) -> None:
    """Each agent's documented minimal configuration (docs/reference.md §4.20)."""
    config = json.loads(add_hooks(None, json_hooks(agent)))
    assert set(config["hooks"]) == events
    for event, entries in config["hooks"].items():
        (entry,) = entries
        handler = entry["hooks"][0] if "hooks" in entry else entry
        assert f"hook {agent}" in handler[command_key]
        if agent == "copilot":
            assert handler["bash"].index(f"--event {event}") > 0
    if agent in ("copilot", "cursor"):
        assert config["version"] == 1
    if agent == "codex":
        assert config["hooks"]["PreToolUse"][0]["matcher"] == "^(Bash|apply_patch)$"
    if agent == "gemini":
        assert (
            config["hooks"]["BeforeTool"][0]["matcher"]
            == "^(write_file|replace|run_shell_command)$"
        )


def test_an_entry_already_there_is_updated_in_place_not_repeated() -> None:
    old = add_hooks(None, CLAUDE).replace(
        json.dumps(CLAUDE.command("PreToolUse"))[1:-1], "/old/venv/bin/memkeeper hook claude-code"
    )
    settings = json.loads(add_hooks(old, CLAUDE))
    assert [g["hooks"][0]["command"] for g in ours(settings, "PreToolUse")] == [
        CLAUDE.command("PreToolUse")
    ]


def test_only_our_handler_leaves_a_group_the_user_merged_it_into() -> None:
    ours_ = CLAUDE.command("PreToolUse")
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}
    mixed = {"matcher": "Bash", "hooks": [{"type": "command", "command": ours_}, group["hooks"][0]]}
    text = json.dumps({"hooks": {"PreToolUse": [mixed]}}, indent=2) + "\n"
    assert json.loads(remove_hooks(text, CLAUDE)) == {"hooks": {"PreToolUse": [group]}}


def test_tabs_stay_tabs() -> None:
    assert '\n\t"hooks"' in add_hooks('{\n\t"model": "x"\n}\n', CLAUDE)


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
        add_hooks(text, CLAUDE)
    assert says in caught.value.message


# -- the files ------------------------------------------------------------------------------------


def test_each_json_agents_entries_go_in_its_first_hook_file() -> None:
    for agent in JSON_AGENTS:
        assert json_hooks(agent).rel == agents.setup(agent).hook_files[0]
    with pytest.raises(ValueError, match="executable files"):
        json_hooks("cline")


def test_the_files_it_writes_are_json_that_json_reads() -> None:
    for agent in JSON_AGENTS:
        text = add_hooks(None, json_hooks(agent))
        assert json.loads(text) == json.loads(jsonc.blank(text))
