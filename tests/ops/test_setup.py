"""``init`` and ``status``: writing a preset policy only when there is none, creating the
memory home, indexing every managed file, and describing the files with their classes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memkeeper import Invalid, Memory
from memkeeper.ops.setup import init, status
from memkeeper.policy.presets import preset_bytes

POLICY = ".memkeeper.yaml"

SAMPLE_FILES: list[dict[str, Any]] = [
    {"path": "AGENTS.md", "class": "section-owned", "sections": 3},
    {"path": "CLAUDE.md", "class": "section-owned", "sections": 5},
    {"path": "memory/architecture.md", "class": "section-owned", "sections": 4},
    {"path": "memory/decisions.md", "class": "append-only", "sections": 2},
    {"path": "memory/risks.md", "class": "append-only", "sections": 2},
    {"path": "memory/scratch/agent-a.md", "class": "private"},
    {"path": "memory/status.md", "class": "generated", "sections": 5},
]


def paths(payload: dict[str, Any]) -> list[str]:
    return [entry["path"] for entry in payload["files"]]


def test_init_keeps_an_existing_policy_byte_for_byte(memory: Memory, sample: Path) -> None:
    before = (sample / POLICY).read_bytes()
    payload = init(memory.workspace, None)
    assert (sample / POLICY).read_bytes() == before
    assert payload["policy_created"] is False
    assert payload["preset"] is None
    assert payload["policy"] == POLICY


def test_init_ignores_a_preset_when_a_policy_exists(memory: Memory, sample: Path) -> None:
    before = (sample / POLICY).read_bytes()
    assert init(memory.workspace, "cline-memory-bank")["preset"] is None
    assert (sample / POLICY).read_bytes() == before


def test_init_describes_every_managed_file_with_class_and_section_count(
    memory: Memory,
) -> None:
    payload = init(memory.workspace, None)
    assert payload["root"] == str(memory.root)
    assert payload["files"] == SAMPLE_FILES


def test_init_indexes_every_managed_file_but_the_private_ones(memory: Memory) -> None:
    init(memory.workspace, None)
    indexed = memory.workspace.store.indexed_paths()
    assert sorted(indexed) == [
        entry["path"] for entry in SAMPLE_FILES if entry["class"] != "private"
    ]
    assert memory.events() == []  # first indexing is no external edit


def test_init_writes_the_default_preset_when_there_is_no_policy(
    memory: Memory, sample: Path
) -> None:
    (sample / POLICY).unlink()
    payload = init(memory.workspace, None)
    assert (sample / POLICY).read_bytes() == preset_bytes("default")
    assert (payload["policy_created"], payload["preset"]) == (True, "default")
    assert "CLAUDE.md" in paths(payload)
    assert (sample / ".memkeeper" / "state.db").is_file()


def test_init_writes_the_named_preset(memory: Memory, sample: Path) -> None:
    (sample / POLICY).unlink()
    (sample / "memory-bank").mkdir()
    (sample / "memory-bank" / "activeContext.md").write_text("# Active context\n\nNow.\n")
    payload = init(memory.workspace, "cline-memory-bank")
    assert (sample / POLICY).read_bytes() == preset_bytes("cline-memory-bank")
    assert payload["preset"] == "cline-memory-bank"
    assert "memory-bank/activeContext.md" in paths(payload)


def test_init_with_an_unknown_preset_writes_no_policy(memory: Memory, sample: Path) -> None:
    (sample / POLICY).unlink()
    with pytest.raises(Invalid, match="no-such-preset"):
        init(memory.workspace, "no-such-preset")
    assert not (sample / POLICY).exists()


def test_init_twice_changes_nothing_the_second_time(memory: Memory) -> None:
    first = init(memory.workspace, None)
    states = {p: memory.workspace.store.file_state(p) for p in paths(first)}
    assert init(memory.workspace, None) == first
    assert {p: memory.workspace.store.file_state(p) for p in paths(first)} == states


def test_status_describes_the_files_like_init(memory: Memory) -> None:
    payload = status(memory.workspace)
    assert payload == {"root": str(memory.root), "policy": POLICY, "files": SAMPLE_FILES}


def test_status_without_a_policy_manages_nothing(memory: Memory, sample: Path) -> None:
    (sample / POLICY).unlink()
    assert status(memory.workspace) == {"root": str(memory.root), "policy": None, "files": []}


def test_status_counts_the_sections_of_a_file_changed_on_disk(memory: Memory, sample: Path) -> None:
    assert memory.workspace.store is not None  # a root with a store: status indexes
    status(memory.workspace)
    path = sample / "AGENTS.md"
    path.write_text(path.read_text() + "\n## Extra\n\nMore.\n")
    (agents,) = [f for f in status(memory.workspace)["files"] if f["path"] == "AGENTS.md"]
    assert agents["sections"] == 4
    edits = [e for e in memory.events() if e.type == "section.external_edit"]
    assert edits[-1].section is not None
    assert edits[-1].section.endswith("/extra")


def test_status_follows_an_edited_policy(memory: Memory, sample: Path) -> None:
    status(memory.workspace)
    path = sample / POLICY
    path.write_text(path.read_text().replace("  - path: AGENTS.md\n    class: section-owned\n", ""))
    assert "AGENTS.md" not in paths(status(memory.workspace))
