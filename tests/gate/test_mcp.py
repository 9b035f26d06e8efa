"""Whether an agent's project configuration runs memkeeper's MCP server (what the gate's
refusals need to name its tools): seen where ``install-hooks --mcp`` wrote it, in JSON,
JSONC or TOML; a foreign or broken entry, a missing file and an agent that keeps its
servers per user are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memkeeper.fs.agentfiles import AGENTS
from memkeeper.gate.agents import setup
from memkeeper.gate.mcp import is_ours, registered
from memkeeper.install.mcp import add_server, remove_server, server

MCP_AGENTS = [agent for agent in AGENTS if setup(agent).mcp_file]


@pytest.mark.parametrize("agent", MCP_AGENTS)
def test_a_registration_is_seen_where_install_wrote_it(agent: str, tmp_path: Path) -> None:
    path = tmp_path / setup(agent).mcp_file
    path.parent.mkdir(parents=True, exist_ok=True)
    assert not registered(str(tmp_path), agent)  # no file
    path.write_text(add_server(None, agent))
    assert registered(str(tmp_path), agent)
    path.write_text(remove_server(path.read_text(), agent))
    assert not registered(str(tmp_path), agent)


def test_a_registration_in_jsonc_is_seen_and_a_foreign_or_broken_one_is_not(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".vscode/mcp.json"
    path.parent.mkdir()
    entry = json.dumps(server("copilot"))
    path.write_text('{\n  // the team\'s servers\n  "servers": {"memkeeper": ' + entry + ",},\n}\n")
    assert registered(str(tmp_path), "copilot")
    path.write_text('{"servers": {"memkeeper": {"command": "other-tool"}}}')
    assert not registered(str(tmp_path), "copilot")
    path.write_text('{"servers": {"memkeeper": ')
    assert not registered(str(tmp_path), "copilot")
    assert not registered(str(tmp_path), "cline")  # per user: the gate cannot know


def test_an_agent_memkeeper_does_not_know_has_no_registration(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(add_server(None, "claude-code"))
    assert registered(str(tmp_path), "claude-code")
    assert not registered(str(tmp_path), "vim")


@pytest.mark.parametrize(
    ("entry", "ours"),
    [
        ({"command": "memkeeper", "args": ["mcp"]}, True),
        ({"command": "sh", "args": ["-c", 'exec "$m" mcp; # memkeeper']}, True),
        ({"command": "/opt/memkeeper/bin/memkeeper", "args": ["mcp", "--root", "/r"]}, True),
        ({"command": "memkeeper-notes", "args": ["serve"]}, False),
        ({"command": "npx", "args": ["mcp-docs-server"]}, False),
        (None, False),
    ],
)
def test_an_entry_is_ours_when_it_runs_memkeeper_mcp(entry: object, ours: bool) -> None:
    assert is_ours(entry) is ours
