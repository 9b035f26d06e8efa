"""``install-hooks --mcp``: ``memkeeper mcp`` registered once in each agent's MCP
configuration, taken out again byte for byte, a server of the user's by that name refused,
and Cline's per-user settings told, not written."""

from __future__ import annotations

import json

import pytest

from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import AGENTS
from memkeeper.gate.agents import setup
from memkeeper.install import mcp as mcpconf
from memkeeper.install.mcp import add_server, remove_server

MCP_AGENTS = [agent for agent in AGENTS if setup(agent).mcp_file]


@pytest.mark.parametrize("agent", MCP_AGENTS)
def test_the_server_is_added_once_and_removed_exactly(agent: str) -> None:
    key = setup(agent).mcp_key
    if agent == "codex":
        text = '# mine\nmodel = "o4"\n\n[mcp_servers.docs]\ncommand = "npx"\n'
    else:
        text = f'{{\n  "{key}": {{\n    "docs": {{"command": "npx"}} // mine\n  }}\n}}\n'
    once = add_server(text, agent)
    assert add_server(once, agent) == once
    assert remove_server(once, agent) == text
    if agent == "codex":
        assert once.startswith(text)
    else:  # the comment stays on the line it was on
        assert '"docs": {"command": "npx"}, // mine\n    "memkeeper": {' in once
    assert remove_server(add_server(None, agent), agent) in ("", "{}\n")


def test_vs_code_gets_its_servers_key_and_type() -> None:
    config = json.loads(add_server(None, "copilot"))
    assert config["servers"]["memkeeper"]["type"] == "stdio"
    assert config["servers"]["memkeeper"]["args"][1] == mcpconf.MCP_SCRIPT


def test_a_server_named_memkeeper_that_is_not_ours_is_refused() -> None:
    text = '{"mcpServers": {"memkeeper": {"command": "my-notes"}}}'
    with pytest.raises(Invalid, match=r'"mcpServers"\.memkeeper is there and does not run'):
        add_server(text, "cursor")
    assert remove_server(text, "cursor") == text


def test_a_registration_of_memkeeper_mcp_by_hand_is_updated_in_place() -> None:
    text = (
        '{\n  "mcpServers": {\n    "memkeeper": {"command": "memkeeper", "args": ["mcp"]}\n  }\n}\n'
    )
    updated = add_server(text, "claude-code")
    assert json.loads(updated)["mcpServers"]["memkeeper"] == mcpconf.server("claude-code")


def test_clines_mcp_settings_are_told_not_written() -> None:
    said = mcpconf.todo("cline", "/home/dev/repo")
    assert "cline_mcp_settings.json" in said
    assert said.endswith(
        '{"memkeeper": {"command": "memkeeper", "args": ["mcp", "--root", "/home/dev/repo"]}}'
    )


def test_every_agent_with_a_project_mcp_file_has_its_to_do() -> None:
    assert [a for a in AGENTS if a != "cline"] == MCP_AGENTS
    for agent in AGENTS:
        assert setup(agent).mcp_todo
        assert mcpconf.todo(agent, "/r") == setup(agent).mcp_todo or agent == "cline"
