"""Hooks that are executable files, one per event (Cline's ``.clinerules/hooks/EVENT``):
written, told from a user's by their marker, and taken out again (docs/reference.md §4.20).
What each file holds, its marker and the name a user's hook in its place is kept under are
the agent's ``Setup.scripts`` (``gate.agents``).

The agent runs one such file per event and directory, so a hook of the user's already there
is moved aside under that name and ours runs it first; uninstalling puts it back.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.gate.agents import setup as setup_of
from memkeeper.install.command import fallback
from memkeeper.install.plan import Edit

if TYPE_CHECKING:
    from memkeeper.gate.agents.base import Scripts, Setup
    from memkeeper.install.plan import Plan


def _scripts(setup: Setup) -> Scripts:
    if setup.scripts is None:
        raise ValueError(f"{setup.name}: its hooks are JSON, not executable files")
    return setup.scripts


def script(agent: str, event: str) -> str:
    """The executable hook file of ``agent`` for ``event``."""
    setup = setup_of(agent)
    missing = fallback(agent) if event in setup.pre else "{}"
    return _scripts(setup).text(event, missing)


def is_ours(agent: str, data: bytes) -> bool:
    """Whether a hook file's bytes are memkeeper's: the marker's words and the command that
    installed it."""
    marker = _scripts(setup_of(agent)).marker.split("{event}")[0].encode()
    return marker in data and f"memkeeper install-hooks {agent}".encode() in data


def hook_file(agent: str, event: str) -> str:
    """The root-relative file of ``agent``'s hook for ``event``."""
    setup = setup_of(agent)
    return setup.hook_files[setup.events.index(event)]


def plan_install(plan: Plan, agent: str, event: str) -> Edit:
    """Our script at the event's hook file, a hook of the user's there moved aside."""
    setup = setup_of(agent)
    scripts = _scripts(setup)
    rel = hook_file(agent, event)
    parents = rel.split("/")[:-1]
    for n in range(1, len(parents) + 1):
        directory = "/".join(parents[:n])
        if (plan.root / directory).exists() and not (plan.root / directory).is_dir():
            raise Invalid(
                f"{directory}: is a file — {setup.label}'s hooks live in the directory "
                f"{'/'.join(parents)}/: {scripts.in_the_way}, then try again",
                path=directory,
            )
    old = plan.read(rel)
    ours = script(agent, event).encode()
    legacy = rel + scripts.kept_as
    theirs = old is not None and not is_ours(agent, old)
    if theirs and os.path.lexists(plan.root / legacy):
        raise Invalid(
            f"{rel} and {legacy} are both there and neither is memkeeper's — keep one of "
            "them, then try again",
            path=rel,
        )
    edit = Edit(rel, None if theirs else old, ours, True, legacy if theirs else None)
    edit.steps["hooks"] = ours != old
    return edit


def plan_uninstall(plan: Plan, agent: str, event: str) -> Edit | None:
    """Our script deleted and the user's hook put back; None when ours is not there."""
    rel = hook_file(agent, event)
    old = plan.read(rel)
    if old is None or not is_ours(agent, old):
        return None
    legacy = rel + _scripts(setup_of(agent)).kept_as
    restore = legacy if os.path.lexists(plan.root / legacy) else None
    edit = Edit(rel, old, None, restore_from=restore)
    edit.steps["hooks"] = True
    return edit
