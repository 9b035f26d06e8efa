"""The MCP server ``memkeeper mcp`` registered in each agent's MCP configuration by
``install-hooks AGENT... --mcp`` (docs/reference.md §4.20, §4.21), as text in and text out.

The server is ``memkeeper``, ``{"command": "sh", "args": ["-c", SCRIPT]}``, SCRIPT finding
memkeeper as the gate commands do (``gate/agentconf.py``); JSON files are merged like the
hooks, Codex's ``config.toml`` table by ``gate/tomledit.py``. A server of that name is
memkeeper's when it runs ``memkeeper mcp``; one that does not is refused, never replaced.
Cline keeps its MCP servers per user, outside the repository: it is told what to add.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import MCP_FILES
from memkeeper.gate import jsonedit, tomledit
from memkeeper.gate.agentconf import TOP, WHERE, remove_path, start, top_object

if TYPE_CHECKING:
    from typing import Any

MCP_SCRIPT = (
    f'm=$(command -v memkeeper) || m="{TOP}/.venv/bin/memkeeper"; [ -x "$m" ] || '
    f'{{ echo "memkeeper is not installed on this machine ({WHERE})" >&2; exit 1; }}; '
    'exec "$m" mcp'
)
SERVER_NAME = "memkeeper"


def server(agent: str) -> dict[str, Any]:
    """The MCP server entry for ``agent``: ``memkeeper mcp``, found as the hooks find it."""
    found: dict[str, Any] = {"command": "sh", "args": ["-c", MCP_SCRIPT]}
    return {"type": "stdio", **found} if agent == "copilot" else found


def servers_key(agent: str) -> str:
    return "servers" if agent == "copilot" else "mcpServers"  # VS Code's .vscode/mcp.json


def is_ours(value: Any) -> bool:
    """Whether an MCP server entry runs ``memkeeper mcp`` (however it finds memkeeper)."""
    spelled = json.dumps(value)
    return bool(re.search(r"\bmemkeeper\b", spelled) and re.search(r"\bmcp\b", spelled))


def add_server(text: str | None, agent: str) -> str:
    rel, key, value = MCP_FILES[agent], servers_key(agent), server(agent)
    if agent == "codex":
        return tomledit.put(text or "", ("mcp_servers", SERVER_NAME), value, rel)
    text = start(text, {})
    top = top_object(text, rel)
    servers = top.member(key)
    if servers is None:
        return jsonedit.insert(text, top, {SERVER_NAME: value}, key)
    if not isinstance(servers.node.value, dict):
        raise Invalid(f'{rel}: "{key}" is not an object — fix it, then try again')
    mine = servers.node.member(SERVER_NAME)
    if mine is None:
        return jsonedit.insert(text, servers.node, value, SERVER_NAME)
    if mine.node.value == value:
        return text
    if not is_ours(mine.node.value):
        raise Invalid(
            f'{rel}: "{key}".{SERVER_NAME} is there and does not run memkeeper mcp — rename '
            "or remove it, then try again",
            path=rel,
        )
    return jsonedit.replace(text, mine.node, value)


def remove_server(text: str, agent: str) -> str:
    rel, key = MCP_FILES[agent], servers_key(agent)
    if agent == "codex":
        found = tomledit.get(tomledit.load(text, rel), ("mcp_servers", SERVER_NAME))
        if not is_ours(found):
            return text
        return tomledit.drop(text, ("mcp_servers", SERVER_NAME), rel)
    top = top_object(text, rel)
    servers = top.member(key)
    if servers is None or not isinstance(servers.node.value, dict):
        return text
    mine = servers.node.member(SERVER_NAME)
    if mine is None or not is_ours(mine.node.value):
        return text
    return remove_path(text, [(top, servers), (servers.node, mine)])


def registered(root: str, agent: str) -> bool:
    """Whether ``agent``'s project MCP configuration under ``root`` runs ``memkeeper mcp``
    (so the gate's refusals can name its tools). Anything unreadable counts as no."""
    import os

    rel = MCP_FILES.get(agent)
    if rel is None:
        return False  # Cline keeps its MCP servers per user: the gate cannot know
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return False
    if SERVER_NAME not in text:
        return False
    try:
        if agent == "codex":
            found = tomledit.get(tomledit.load(text, rel), ("mcp_servers", SERVER_NAME))
        else:
            data = json.loads(jsonedit.blank(text))
            servers = data.get(servers_key(agent)) if isinstance(data, dict) else None
            found = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    except (Invalid, ValueError):
        return False
    return found is not None and is_ours(found)


def cline_mcp(root: str) -> str:
    """What to add to Cline's MCP settings by hand: they are the user's, outside the repo."""
    entry = {SERVER_NAME: {"command": "memkeeper", "args": ["mcp", "--root", root]}}
    return (
        "Cline keeps MCP servers per user, outside the repository: in Cline, open MCP Servers "
        "→ Configure MCP Servers (cline_mcp_settings.json) and add to its mcpServers: "
        + json.dumps(entry)
    )


MCP_TODO = {
    "claude-code": "Claude Code asks each user to approve the project's MCP servers in "
    ".mcp.json the first time (claude mcp list shows memkeeper).",
    "codex": "Codex reads .codex/config.toml only in a trusted project (/mcp lists memkeeper).",
    "gemini": "Gemini CLI starts the memkeeper server of .gemini/settings.json in this "
    "trusted folder (/mcp lists it).",
    "copilot": "In VS Code, start the memkeeper server of .vscode/mcp.json (it asks you to "
    "trust it first).",
    "cursor": "Enable the memkeeper server in Cursor's settings (MCP): Cursor asks before it "
    "starts a project's server.",
}
