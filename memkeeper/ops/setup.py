"""``init`` and ``status``: setting up a memory home and describing it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memkeeper.fs import files as fsio
from memkeeper.fs.walk import managed_files
from memkeeper.names import POLICY_FILE
from memkeeper.ops import read
from memkeeper.policy.loader import load_policy, parse_policy, policy_bytes
from memkeeper.policy.presets import preset_bytes

if TYPE_CHECKING:
    from typing import Any

    from memkeeper.ops.workspace import Workspace
    from memkeeper.policy.model import Policy


def init(ws: Workspace, preset: str | None) -> dict[str, Any]:
    """Write the policy if absent, create ``.memkeeper/``, index every managed file."""

    created = not os.path.exists(os.path.join(ws.root, POLICY_FILE))
    if created:
        chosen = preset_bytes(preset or "default")
        parse_policy(chosen, f"preset {preset or 'default'}")
        fsio.atomic_write(ws.root, POLICY_FILE, chosen)
    policy = load_policy(ws.root)
    _ = ws.store  # create the store first: files are indexed into it, not read statelessly
    payload = {
        "root": str(ws.root),
        "policy": POLICY_FILE,
        "policy_created": created,
        "preset": (preset or "default") if created else None,
        "files": _describe(ws, policy),
    }
    ws.store.trim_log(0)  # indexing every file leaves a big WAL for the next command
    return payload


def status(ws: Workspace) -> dict[str, Any]:
    """The root, the policy and every managed file with its class and section count."""

    data = policy_bytes(ws.root)
    policy = parse_policy(data)
    return {
        "root": str(ws.root),
        "policy": None if data is None else POLICY_FILE,
        "files": _describe(ws, policy),
    }


def _describe(ws: Workspace, policy: Policy) -> list[dict[str, Any]]:
    """Managed files with class and section count, indexing any that changed (not private)."""

    files = []
    for rel, rule in managed_files(policy, ws.root):
        entry: dict[str, Any] = {"path": rel, "class": rule.file_class}
        if rule.file_class != "private":
            entry["sections"] = len(read.sections(ws, rel))
        files.append(entry)
    return files
