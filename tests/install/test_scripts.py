"""Hooks that are executable files (Cline's): each runs the gate with its event, is told from
a user's own by its marker, and (through the real scripts, tests/e2e/test_install_agents.py)
runs a user's hook kept beside it first."""

from __future__ import annotations

import pytest

from memkeeper.gate.agents import cline
from memkeeper.install import scripts
from memkeeper.install.command import fallback

# -- Cline's files and the names --------------------------------------------------------------


def test_clines_scripts_run_the_gate_with_their_event() -> None:
    for event in cline.SETUP.events:
        script = scripts.script("cline", event)
        assert script.startswith("#!/bin/sh\n" + cline.MARKER.format(event=event))
        assert f'exec "$m" hook cline --event {event}' in script
        assert scripts.is_ours("cline", script.encode())
    assert not scripts.is_ours("cline", b"#!/bin/sh\nexec memkeeper hook cline\n")


def test_only_the_pre_tool_script_answers_the_agents_refusal_while_memkeeper_is_missing() -> None:
    assert fallback("cline") in scripts.script("cline", "PreToolUse")
    assert fallback("cline") not in scripts.script("cline", "PostToolUse")
    assert "printf '%s\\n' '{}'" in scripts.script("cline", "PostToolUse")


def test_each_event_has_its_own_file() -> None:
    assert scripts.hook_file("cline", "PreToolUse") == ".clinerules/hooks/PreToolUse"
    assert scripts.hook_file("cline", "PostToolUse") == ".clinerules/hooks/PostToolUse"


def test_an_agent_whose_hooks_are_json_has_no_scripts() -> None:
    with pytest.raises(ValueError, match="JSON, not executable files"):
        scripts.script("claude-code", "PreToolUse")
