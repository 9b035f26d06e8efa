"""The MCP server ``memkeeper mcp`` registered in each agent's MCP configuration by
``install-hooks AGENT... --mcp`` (docs/reference.md §4.20, §4.21), as text in and text out.

The server is ``memkeeper``, ``{"command": "sh", "args": ["-c", SCRIPT]}``, SCRIPT finding
memkeeper as the gate commands do (``install.command``); where it goes is the agent's
``Setup`` (``gate.agents``). JSON files are merged like the hooks, a ``.toml`` one's table
(Codex's ``config.toml``) by ``install.tomledit``. A server of that name is memkeeper's when
it runs ``memkeeper mcp`` (``gate.mcp``); one that does not is refused, never replaced. An
agent that keeps its MCP servers per user, outside the repository, is told what to add.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.gate.agents import setup as setup_of
from memkeeper.gate.mcp import SERVER_NAME, is_ours
from memkeeper.install import jsonedit, tomledit
from memkeeper.install.command import TOP, WHERE
from memkeeper.install.jsonhooks import remove_path, start, top_object

if TYPE_CHECKING:
    from typing import Any

MCP_SCRIPT = (
    f'm=$(command -v memkeeper) || m="{TOP}/.venv/bin/memkeeper"; [ -x "$m" ] || '
    f'{{ echo "memkeeper is not installed on this machine ({WHERE})" >&2; exit 1; }}; '
    'exec "$m" mcp'
)


def server(agent: str) -> dict[str, Any]:
    """The MCP server entry for ``agent``: ``memkeeper mcp``, found as the hooks find it."""
    kind = setup_of(agent).mcp_type
    found: dict[str, Any] = {"command": "sh", "args": ["-c", MCP_SCRIPT]}
    return {"type": kind, **found} if kind else found


def add_server(text: str | None, agent: str) -> str:
    setup = setup_of(agent)
    rel, key, value = setup.mcp_file, setup.mcp_key, server(agent)
    if rel.endswith(".toml"):
        return tomledit.put(text or "", (key, SERVER_NAME), value, rel)
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
    setup = setup_of(agent)
    rel, key = setup.mcp_file, setup.mcp_key
    if rel.endswith(".toml"):
        found = tomledit.get(tomledit.load(text, rel), (key, SERVER_NAME))
        if not is_ours(found):
            return text
        return tomledit.drop(text, (key, SERVER_NAME), rel)
    top = top_object(text, rel)
    servers = top.member(key)
    if servers is None or not isinstance(servers.node.value, dict):
        return text
    mine = servers.node.member(SERVER_NAME)
    if mine is None or not is_ours(mine.node.value):
        return text
    return remove_path(text, [(top, servers), (servers.node, mine)])


def by_hand(agent: str, root: str) -> str:
    """What to add to the MCP settings of an agent that keeps them per user, outside the
    repository (Cline): its words, then the entry for this project."""
    entry = {SERVER_NAME: {"command": "memkeeper", "args": ["mcp", "--root", root]}}
    return setup_of(agent).mcp_todo + json.dumps(entry)


def todo(agent: str, root: str) -> str:
    """What is left for the user to do once the server is registered (or told)."""
    setup = setup_of(agent)
    return setup.mcp_todo if setup.mcp_file else by_hand(agent, root)
