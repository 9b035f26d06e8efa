"""``init`` and ``status``: setting up a memory home and describing it."""

from __future__ import annotations

import os

from memkeeper.api import POLICY_FILE, Memory
from memkeeper.fs import files as fsio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.policy.model import Policy


def init(memory: Memory, preset: str | None) -> dict[str, Any]:
    """Write the policy if absent, create ``.memkeeper/``, index every managed file."""
    from memkeeper.policy.model import load_policy
    from memkeeper.policy.presets import preset_bytes

    policy_path = os.path.join(memory.root, POLICY_FILE)
    created = not os.path.exists(policy_path)
    if created:
        chosen = preset_bytes(preset or "default")
        load_policy(chosen, f"preset {preset or 'default'}")
        fsio.atomic_write(memory.root, POLICY_FILE, chosen)
    with open(policy_path, "rb") as handle:
        policy = load_policy(handle.read(), POLICY_FILE)
    payload = {
        "root": str(memory.root),
        "policy": POLICY_FILE,
        "policy_created": created,
        "preset": (preset or "default") if created else None,
        "files": _describe(memory, policy),
    }
    memory.store.trim_log(0)  # indexing every file leaves a big WAL for the next command
    return payload


def status(memory: Memory) -> dict[str, Any]:
    """The root, the policy and every managed file with its class and section count."""
    from memkeeper.policy.model import empty_policy, load_policy

    policy_path = os.path.join(memory.root, POLICY_FILE)
    exists = os.path.exists(policy_path)
    if exists:
        with open(policy_path, "rb") as handle:
            policy = load_policy(handle.read(), POLICY_FILE)
    else:
        policy = empty_policy()
    return {
        "root": str(memory.root),
        "policy": POLICY_FILE if exists else None,
        "files": _describe(memory, policy),
    }


def _describe(memory: Memory, policy: Policy) -> list[dict[str, Any]]:
    """Managed files with class and section count, indexing any that changed (not private)."""
    from memkeeper.policy.model import managed_files

    files = []
    for rel, rule in managed_files(policy, memory.root):
        entry: dict[str, Any] = {"path": rel, "class": rule.file_class}
        if rule.file_class != "private":
            entry["sections"] = len(memory.indexed_sections(rel))
        files.append(entry)
    return files
