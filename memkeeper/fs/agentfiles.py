"""Where each agent's gate is configured in a project, and whether the gate can start on
this machine (docs/reference.md §4.16, §4.20).

``install-hooks`` (``memkeeper.install``) writes these files, as each agent's ``Setup``
(``gate.agents``) describes them; ``check`` (``ops/check.py``, a layer below ``gate``, hence
this copy of their names here, held equal to the setups by tests/gate/agents/test_base.py)
warns when one of them runs memkeeper's gate but no ``memkeeper`` is to be found — on PATH,
or as the project's ``.venv/bin/memkeeper``, the two places the installed commands look.
Cheap to import: the CLI's hook verbs load it.
"""

from __future__ import annotations

import os
import re

AGENTS = ("claude-code", "codex", "gemini", "copilot", "cline", "cursor")
LABELS = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "copilot": "Copilot",
    "cline": "Cline",
    "cursor": "Cursor",
}
# The files install-hooks writes the gate into, per agent (root-relative).
HOOK_FILES = {
    "claude-code": (".claude/settings.json",),
    "codex": (".codex/hooks.json",),
    "gemini": (".gemini/settings.json",),
    "copilot": (".github/hooks/memkeeper.json",),
    "cline": tuple(
        f".clinerules/hooks/{event}"
        for event in ("PreToolUse", "PostToolUse", "TaskStart", "TaskResume", "UserPromptSubmit")
    ),
    "cursor": (".cursor/hooks.json",),
}
VENV_MEMKEEPER = ".venv/bin/memkeeper"


def gate_pattern(agent: str) -> re.Pattern[str]:
    """What a command running memkeeper's gate for ``agent`` looks like."""
    return re.compile(rf"\bmemkeeper\b.*\bhook\s+{re.escape(agent)}\b", re.DOTALL)


def memkeeper_found(root: str | os.PathLike[str]) -> bool:
    """Whether the installed commands would find memkeeper here: on PATH, else in the
    project's virtual environment."""
    import shutil

    venv = os.path.join(root, VENV_MEMKEEPER)
    return shutil.which("memkeeper") is not None or os.access(venv, os.X_OK)


def installed_gates(root: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """``(agent, file)`` for each configuration file under ``root`` that runs the gate."""
    found = []
    for agent, rels in HOOK_FILES.items():
        pattern = gate_pattern(agent)
        for rel in rels:
            if pattern.search(_head(os.path.join(root, rel))):
                found.append((agent, rel))
                break
    return found


def unrunnable_gates(root: str | os.PathLike[str]) -> list[str]:
    """A warning for each installed gate that cannot run on this machine (none when
    memkeeper is found)."""
    gates = installed_gates(root)
    if not gates or memkeeper_found(root):
        return []
    return [
        f"{rel}: the {LABELS[agent]} gate cannot run on this machine — it runs memkeeper, "
        f"which is neither on PATH nor at {VENV_MEMKEEPER}; install memkeeper"
        for agent, rel in gates
    ]


def _head(path: str) -> str:
    """The start of a small text file ('' when there is none)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return ""
