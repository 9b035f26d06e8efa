"""One adapter per agent (docs/reference.md §10): ``claude-code``, ``codex``, ``gemini``,
``copilot``, ``cline``, ``cursor``. Each module defines ``ADAPTER`` (``gate.agents.base``);
it is imported only when its agent's hook runs, and ``detect`` tells the agent from the
payload's shape, since one command may be reached by several agents (Copilot and Cursor
also run the hooks in ``.claude/settings.json``)."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.gate.agents.base import Adapter

AGENTS = (  # in the order ``detect`` tries them: the most specific shapes first
    "cursor",
    "cline",
    "copilot",
    "codex",
    "gemini",
    "claude-code",
)
_MODULES = {name: name.replace("-", "_") for name in AGENTS}


def adapter(name: str) -> Adapter:
    """The adapter of agent ``name`` (one of ``AGENTS``)."""
    found: Adapter = importlib.import_module(f"memkeeper.gate.agents.{_MODULES[name]}").ADAPTER
    return found


def detect(payload: dict[str, Any], named: Adapter) -> Adapter:
    """The agent whose payload this is: ``named`` (from argv) if the payload fits it, else
    the first other agent whose shape it has, else ``named``."""
    if named.sniff(payload):
        return named
    for name in AGENTS:
        if name != named.name:
            other = adapter(name)
            if other.sniff(payload):
                return other
    return named
