"""What ``install-hooks`` writes for each agent: the portable gate commands and their answer
where memkeeper is missing, the entries merged into (and taken out of) the user's JSON, the
and what is left for the user to do."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest

from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import AGENTS, HOOK_FILES, MCP_FILES
from memkeeper.gate import agentconf, jsonedit
from memkeeper.gate.agentconf import (
    add_hooks,
    fallback,
    gate_command,
    json_hooks,
    remove_hooks,
)

JSON_AGENTS = [a for a in AGENTS if a != "cline"]
CLAUDE = json_hooks("claude-code")


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        group
        for group in settings["hooks"][event]
        if any("hook claude-code" in h["command"] for h in group["hooks"])
    ]


# -- the commands -------------------------------------------------------------------------------


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


@pytest.mark.e2e
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


@pytest.mark.e2e
def test_without_memkeeper_copilot_asks_before_and_says_nothing_after() -> None:
    payload = {"toolName": "bash", "toolArgs": {"command": "ls"}}
    assert json.loads(missing_answer("copilot", payload, "preToolUse")) == {
        "permissionDecision": "ask",
        "permissionDecisionReason": agentconf.missing("copilot"),
    }
    assert missing_answer("copilot", payload, "postToolUse") == ""


def test_the_deny_says_what_to_do_and_where_the_gate_is_set_up() -> None:
    assert agentconf.missing("codex").endswith(
        "Ask the user to install memkeeper, then restart Codex (the gate is set up in "
        ".codex/hooks.json)."
    )
    assert "stops the task" in agentconf.missing("cline")


# -- hooks merged into the user's JSON ---------------------------------------------------------


def test_settings_are_created_with_both_hooks() -> None:
    settings = json.loads(add_hooks(None, CLAUDE))
    for event in ("PreToolUse", "PostToolUse"):
        assert settings["hooks"][event] == [
            {
                "matcher": "Edit|MultiEdit|Write|Bash|PowerShell",
                "hooks": [{"type": "command", "command": agentconf.gate_command("claude-code")}],
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
    assert remove_hooks(created, spec) == agentconf.start(None, spec.skeleton)


@pytest.mark.parametrize(
    ("agent", "events", "command_key"),
    [
        ("codex", {"PreToolUse", "PostToolUse"}, "command"),
        ("gemini", {"BeforeTool", "AfterTool"}, "command"),
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
    """agent-hooks/<agent>.md section 1, "Minimal config"."""
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


# -- the names ---------------------------------------------------------------------------------


def test_every_agent_has_its_files_and_what_is_left_to_do() -> None:
    assert set(HOOK_FILES) == set(agentconf.TODO) == set(AGENTS)
    assert set(MCP_FILES) == set(AGENTS) - {"cline"}
    for agent in JSON_AGENTS:
        assert json_hooks(agent).rel == HOOK_FILES[agent][0]


def test_the_files_it_writes_are_json_that_json_reads() -> None:
    for agent in JSON_AGENTS:
        text = add_hooks(None, json_hooks(agent))
        assert json.loads(text) == json.loads(jsonedit.blank(text))
