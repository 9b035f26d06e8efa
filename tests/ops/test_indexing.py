"""Indexing of changes memkeeper did not make, the events that indexing records, and the
lookups of a file's sections in the index."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper import Invalid
from memkeeper.events import digest
from tests.ops.conftest import edit

if TYPE_CHECKING:
    from memkeeper.ops.workspace import Workspace

DECISIONS = "memory/decisions.md"
SCRATCH = "memory/scratch/agent-a.md"


def event_types(ws: Workspace) -> list[str]:
    return [event.type for event in ws.store.events()]


def test_the_first_indexing_of_a_file_records_no_event(ws: Workspace) -> None:
    ws.refresh("CLAUDE.md")
    state = ws.store.file_state("CLAUDE.md")
    assert state is not None
    assert state.file_rev == 1
    assert ws.store.events() == []


def test_refresh_of_an_unchanged_file_changes_nothing(ws: Workspace) -> None:
    ws.refresh("CLAUDE.md")
    before = ws.store.file_state("CLAUDE.md")
    ws.refresh("CLAUDE.md")
    assert ws.store.file_state("CLAUDE.md") == before
    assert ws.store.events() == []


def test_refresh_indexes_an_outside_edit_as_an_external_edit(ws: Workspace, sample: Path) -> None:
    ws.refresh("CLAUDE.md")
    edit(sample, "CLAUDE.md", "make build", "make wheel")
    ws.refresh("CLAUDE.md")
    (event,) = ws.store.events()
    assert (event.type, event.actor, event.path, event.section) == (
        "section.external_edit",
        "external",
        "CLAUDE.md",
        "inventory-service/build",
    )
    assert event.data == {"rev": 2, "noticed_by": "agent-a"}
    assert ws.section_row("CLAUDE.md", "build").body.count(b"make wheel") == 1
    state = ws.store.file_state("CLAUDE.md")
    assert state is not None
    assert state.file_rev == 2


def test_an_external_edit_names_the_actor_and_detail_when_known(
    ws: Workspace, sample: Path
) -> None:
    ws.refresh("CLAUDE.md")
    edit(sample, "CLAUDE.md", "make test", "make check")
    ws.refresh("CLAUDE.md", actor="agent-b", detail={"tool": "Edit", "tool_use_id": "t1"})
    (event,) = ws.store.events()
    assert event.actor == "agent-b"
    assert event.section == "inventory-service/testing"
    assert event.data == {"rev": 2, "noticed_by": "agent-a", "tool": "Edit", "tool_use_id": "t1"}


def test_a_renamed_heading_records_the_key_that_went_and_the_one_that_came(
    ws: Workspace, sample: Path
) -> None:
    ws.refresh("CLAUDE.md")
    edit(sample, "CLAUDE.md", "## Testing\n", "## Checks\n")
    ws.refresh("CLAUDE.md")
    sections = {event.section for event in ws.store.events()}
    assert sections == {"inventory-service/testing", "inventory-service/checks"}


def test_index_file_of_memkeepers_own_write_records_nothing(ws: Workspace, sample: Path) -> None:
    ws.refresh("CLAUDE.md")
    new = (sample / "CLAUDE.md").read_bytes().replace(b"make build", b"make all")
    with ws.locked("CLAUDE.md"), ws.store.writing():
        doc = ws.index_file("CLAUDE.md", new, external=False)
    assert doc is not None
    assert ws.store.events() == []
    state = ws.store.file_state("CLAUDE.md")
    assert state is not None
    assert (state.file_rev, state.file_hash) == (2, digest(new))
    assert ws.section_row("CLAUDE.md", "build").rev == 2


def test_index_file_of_the_bytes_already_indexed_is_a_no_op(ws: Workspace, sample: Path) -> None:
    ws.refresh("CLAUDE.md")
    with ws.store.writing():
        assert ws.index_file("CLAUDE.md", (sample / "CLAUDE.md").read_bytes()) is None


def test_an_edit_of_a_private_file_is_indexed_without_events(ws: Workspace, sample: Path) -> None:
    ws.refresh(SCRATCH)
    (sample / SCRATCH).write_text((sample / SCRATCH).read_text() + "\nmore notes\n")
    ws.refresh(SCRATCH)
    state = ws.store.file_state(SCRATCH)
    assert state is not None
    assert state.file_rev == 2
    assert ws.store.events() == []


def test_a_rewrite_of_append_only_history_records_a_policy_violation(
    ws: Workspace, sample: Path
) -> None:
    ws.refresh(DECISIONS)
    edit(sample, DECISIONS, "Use SQLite", "Use Redis")
    ws.refresh(DECISIONS, actor="agent-b")
    violation, external = ws.store.events()
    assert (violation.type, violation.actor, violation.path) == (
        "policy.violation",
        "external",
        DECISIONS,
    )
    assert str(violation.data["before"]).startswith("sha256:")  # what a restore puts back
    assert {k: v for k, v in violation.data.items() if k != "before"} == {
        "rule": "append-only",
        "line": 7,
        "message": f"{DECISIONS}:7: history was rewritten, not extended",
        "noticed_by": "agent-a",
    }
    assert (external.type, external.actor) == ("section.external_edit", "agent-b")


def test_history_that_is_only_extended_is_no_violation(ws: Workspace, sample: Path) -> None:
    ws.refresh(DECISIONS)
    path = sample / DECISIONS
    path.write_text(path.read_text() + "\n## 2026-12-01 — agent-b\n\nMore.\n")
    ws.refresh(DECISIONS)
    types = event_types(ws)
    assert "policy.violation" not in types
    assert types
    # the new entry is an entry, as `append` records one (feeds built from entries show it);
    # the entry before it only gained the blank line that separates them
    assert types[-2:] == ["section.external_edit", "entry.appended"]
    (entry,) = ws.store.events()[-1:]
    assert (entry.actor, entry.data["title"]) == ("external", "2026-12-01 — agent-b")


def test_putting_rewritten_history_back_is_a_restore_not_a_second_violation(
    ws: Workspace, sample: Path
) -> None:
    ws.refresh(DECISIONS)
    original = (sample / DECISIONS).read_bytes()
    edit(sample, DECISIONS, "Use SQLite", "Use Redis")
    ws.refresh(DECISIONS)
    (sample / DECISIONS).write_bytes(original)  # git checkout HEAD -- memory/decisions.md
    ws.refresh(DECISIONS)
    types = event_types(ws)
    assert types.count("policy.violation") == 1
    assert "history.restored" in types


def test_section_row_resolves_an_exact_key_or_a_unique_last_segment(ws: Workspace) -> None:
    ws.refresh("CLAUDE.md")
    assert ws.section_row("CLAUDE.md", "inventory-service/build").key == "inventory-service/build"
    assert ws.section_row("CLAUDE.md", "testing").key == "inventory-service/testing"
    with pytest.raises(Invalid) as caught:
        ws.section_row("CLAUDE.md", "deployment")
    assert "inventory-service/build" in caught.value.candidates
