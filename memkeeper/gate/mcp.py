"""Whether an agent's project configuration runs memkeeper's MCP server, so that the gate's
refusals can name its tools too (docs/reference.md §7). The server is the entry named
``memkeeper`` under the agent's key (``gate.agents``: ``Setup.mcp_file``, ``mcp_key``), in
JSON, JSONC or, for a ``.toml`` file, a table; it is memkeeper's when it runs ``memkeeper
mcp``, however it finds memkeeper. ``install.mcp`` writes it.
"""

from __future__ import annotations

import json
import os
import re

TYPE_CHECKING = False  # start-up idiom: the hook asks this when it refuses a call
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.gate.agents.base import Setup

SERVER_NAME = "memkeeper"


def is_ours(value: Any) -> bool:
    """Whether an MCP server entry runs ``memkeeper mcp`` (however it finds memkeeper)."""
    spelled = json.dumps(value)
    return bool(re.search(r"\bmemkeeper\b", spelled) and re.search(r"\bmcp\b", spelled))


def registered(root: str, agent: str) -> bool:
    """Whether ``agent``'s project MCP configuration under ``root`` runs ``memkeeper mcp``.
    Anything unreadable counts as no, and so does an agent that keeps its servers per user
    (the gate cannot know) or one memkeeper does not know."""
    from memkeeper.gate.agents import AGENTS
    from memkeeper.gate.agents import setup as setup_of

    if agent not in AGENTS:
        return False
    setup = setup_of(agent)
    rel = setup.mcp_file
    if not rel:
        return False
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return False  # most calls stop here, before any parser is imported
    if SERVER_NAME not in text:
        return False
    try:
        found = _entry(text, setup)
    except ValueError:
        return False
    return found is not None and is_ours(found)


def _entry(text: str, setup: Setup) -> Any:
    """The server entry named ``memkeeper`` in the file's text (None: there is none);
    ``ValueError`` when the text does not parse."""
    if setup.mcp_file.endswith(".toml"):
        import tomllib

        data: Any = tomllib.loads(text)
    else:
        from memkeeper.gate.jsonc import blank

        data = json.loads(blank(text))
    servers = data.get(setup.mcp_key) if isinstance(data, dict) else None
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None
