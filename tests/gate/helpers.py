"""Helpers shared by the gate's tests: hook payload pieces and hand-built facts."""

from __future__ import annotations

from typing import Any

from memkeeper.gate import facts as gatefacts


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    """Claude Code's ``tool_input`` of an Edit."""
    return {"file_path": path, "old_string": old, "new_string": new, "replace_all": False}


def hand_facts(**file: Any) -> tuple[gatefacts.Facts, str]:
    """Facts about ``/r/memory/decisions.md`` (append-only) and nothing else; its path."""
    path = "/r/memory/decisions.md"
    found = gatefacts.PathFacts("memory/decisions.md", "file", True, "append-only", **file)
    return gatefacts.Facts("/r", "/r", "me", "", 100.0, paths={path: found}), path
