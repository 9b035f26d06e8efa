"""``install-hooks --mcp``: ``memkeeper mcp`` registered once in each agent's MCP
configuration, taken out again byte for byte, a server of the user's by that name refused,
and Cline's per-user settings told, not written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import MCP_FILES
from memkeeper.gate import mcpconf
from memkeeper.gate.mcpconf import add_server, remove_server


@pytest.mark.parametrize("agent", list(MCP_FILES))
def test_the_server_is_added_once_and_removed_exactly(agent: str) -> None:
    key = mcpconf.servers_key(agent)
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
    said = mcpconf.cline_mcp("/home/dev/repo")
    assert "cline_mcp_settings.json" in said
    assert said.endswith(
        '{"memkeeper": {"command": "memkeeper", "args": ["mcp", "--root", "/home/dev/repo"]}}'
    )


def test_every_agent_with_a_project_mcp_file_has_its_to_do() -> None:
    assert set(mcpconf.MCP_TODO) == set(MCP_FILES)


@pytest.mark.parametrize("agent", list(MCP_FILES))
def test_a_registration_is_seen_where_install_wrote_it(agent: str, tmp_path: Path) -> None:
    path = tmp_path / MCP_FILES[agent]
    path.parent.mkdir(parents=True, exist_ok=True)
    assert not mcpconf.registered(str(tmp_path), agent)  # no file
    path.write_text(add_server(None, agent))
    assert mcpconf.registered(str(tmp_path), agent)
    path.write_text(remove_server(path.read_text(), agent))
    assert not mcpconf.registered(str(tmp_path), agent)


def test_a_registration_in_jsonc_is_seen_and_a_foreign_or_broken_one_is_not(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".vscode/mcp.json"
    path.parent.mkdir()
    entry = json.dumps(mcpconf.server("copilot"))
    path.write_text('{\n  // the team\'s servers\n  "servers": {"memkeeper": ' + entry + ",},\n}\n")
    assert mcpconf.registered(str(tmp_path), "copilot")
    path.write_text('{"servers": {"memkeeper": {"command": "other-tool"}}}')
    assert not mcpconf.registered(str(tmp_path), "copilot")
    path.write_text('{"servers": {"memkeeper": ')
    assert not mcpconf.registered(str(tmp_path), "copilot")
    assert not mcpconf.registered(str(tmp_path), "cline")  # per user: the gate cannot know
