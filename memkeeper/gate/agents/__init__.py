"""One module per agent (docs/reference.md §7): ``claude-code``, ``codex``, ``gemini``,
``copilot``, ``cline``, ``cursor``. Each defines ``ADAPTER``, its hook's protocol, and
``SETUP``, what ``install-hooks`` writes for it (``gate.agents.base``); it is imported only
when its agent's hook runs or its files are installed, and ``detect`` tells the agent from
the payload's shape, since one command may be reached by several agents (Copilot and Cursor
also run the hooks in ``.claude/settings.json``)."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.gate.agents.base import Adapter, Setup

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


def setup(name: str) -> Setup:
    """What ``install-hooks`` writes for agent ``name`` (one of ``AGENTS``)."""
    found: Setup = importlib.import_module(f"memkeeper.gate.agents.{_MODULES[name]}").SETUP
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
