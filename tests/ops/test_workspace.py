"""The operations' context: the policy's verdicts (cached by the policy's hash), indexing of
changes memkeeper did not make, the events that indexing records, file locks and the clock."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memkeeper import Invalid
from memkeeper.clock import FakeClock
from memkeeper.events import digest
from memkeeper.ops import workspace as workspace_module
from memkeeper.ops.workspace import Workspace
from memkeeper.policy import loader
from memkeeper.records import Verdict

POLICY = ".memkeeper.yaml"
DECISIONS = "memory/decisions.md"
SCRATCH = "memory/scratch/agent-a.md"


@pytest.fixture
def ws(sample: Path) -> Iterator[Workspace]:
    """A workspace on the sample, its store made (without one, nothing is cached or indexed)."""
    opened = Workspace(sample, "agent-a", FakeClock(1_800_000_000.0))
    assert opened.store is not None
    yield opened
    opened.close()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes | None]:
    """Every policy the workspace parses, in order (a verdict served from a cache adds none)."""
    seen: list[bytes | None] = []
    real = loader.parse_policy

    def counting(data: bytes | None, *args: Any, **kwargs: Any) -> Any:
        seen.append(data)
        return real(data, *args, **kwargs)

    monkeypatch.setattr(loader, "parse_policy", counting)
    return seen


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def event_types(ws: Workspace) -> list[str]:
    return [event.type for event in ws.store.events()]


# -- the policy's verdicts -------------------------------------------------------------------


def test_an_unmanaged_file_has_no_class_no_strictness_and_no_owners(ws: Workspace) -> None:
    assert ws.rule("README.md") == Verdict(None, False, None)


def test_a_managed_file_takes_its_rules_class(ws: Workspace) -> None:
    assert ws.rule("CLAUDE.md") == Verdict("section-owned", False, None)
    assert ws.rule(DECISIONS).file_class == "append-only"
    assert ws.rule("memory/status.md").file_class == "generated"
    assert ws.rule(SCRATCH).file_class == "private"


def test_a_section_rule_names_its_owners_and_makes_the_section_strict(ws: Workspace) -> None:
    verdict = ws.rule("CLAUDE.md", "inventory-service/release-process")
    assert verdict == Verdict("section-owned", True, ("human",))
    assert ws.rule("CLAUDE.md", "inventory-service/build") == Verdict("section-owned", False, None)


def test_a_strict_file_rule_makes_every_section_strict(ws: Workspace, sample: Path) -> None:
    edit(sample, POLICY, "  - path: AGENTS.md\n", "  - path: AGENTS.md\n    strict: true\n")
    assert ws.rule("AGENTS.md") == Verdict("section-owned", True, None)
    assert ws.rule("AGENTS.md", "anything").strict is True


def test_without_a_policy_nothing_is_managed(ws: Workspace, sample: Path) -> None:
    (sample / POLICY).unlink()
    assert ws.rule("CLAUDE.md") == Verdict(None, False, None)
    assert ws.store.cached("rule:none:CLAUDE.md#") is not None


def test_without_a_store_verdicts_are_given_and_no_store_is_made(sample: Path) -> None:
    bare = Workspace(sample, "agent-a")
    assert not bare.has_store
    assert bare.rule(SCRATCH).file_class == "private"
    assert not (sample / ".memkeeper").exists()
    assert bare.store is not None  # made on first use by an operation that writes
    assert bare.has_store
    bare.close()


def test_a_verdict_is_parsed_once_then_served_from_memory(
    ws: Workspace, parses: list[bytes | None]
) -> None:
    first = ws.rule("CLAUDE.md")
    assert ws.rule("CLAUDE.md") == first
    assert len(parses) == 1


def test_a_second_workspace_reads_the_verdict_from_the_store_without_parsing(
    ws: Workspace, sample: Path, parses: list[bytes | None]
) -> None:
    ws.rule("CLAUDE.md", "inventory-service/release-process")
    policy_hash = digest((sample / POLICY).read_bytes())
    assert ws.store.cached(f"rule:{policy_hash}:CLAUDE.md#inventory-service/release-process")
    other = Workspace(sample, "agent-b")
    try:
        verdict = other.rule("CLAUDE.md", "inventory-service/release-process")
    finally:
        other.close()
    assert verdict == Verdict("section-owned", True, ("human",))
    assert len(parses) == 1


def test_an_edited_policy_gives_new_verdicts_under_its_new_hash(
    ws: Workspace, sample: Path, parses: list[bytes | None]
) -> None:
    assert ws.rule("AGENTS.md").file_class == "section-owned"
    edit(sample, POLICY, "  - path: AGENTS.md\n    class: section-owned\n", "")
    assert ws.rule("AGENTS.md").file_class is None
    assert len(parses) == 2
    assert parses[-1] == (sample / POLICY).read_bytes()


def test_the_policy_is_read_again_only_when_its_stat_changes(
    ws: Workspace, sample: Path, parses: list[bytes | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []

    def counting_open(path: str, mode: str) -> Any:
        opened.append(path)
        return open(path, mode)

    monkeypatch.setattr(workspace_module, "open", counting_open, raising=False)
    ws.rule("CLAUDE.md")
    ws.rule("AGENTS.md")
    ws.claim_ttls()
    assert len(opened) <= 1  # once (none if the store's choice already read it)
    before, parsed = len(opened), len(parses)
    os.utime(sample / POLICY, ns=(1_000_000_000, 1_000_000_000))
    ws.rule("CLAUDE.md")
    assert len(opened) == before + 1
    assert len(parses) == parsed  # the touched policy hashes the same: its verdicts stand


def test_claim_ttls_follow_the_policy_and_its_defaults(ws: Workspace, sample: Path) -> None:
    assert ws.claim_ttls() == (120, 3600)
    edit(sample, POLICY, "default_ttl: 120", "default_ttl: 45")
    assert ws.claim_ttls() == (45, 3600)
    (sample / POLICY).unlink()
    assert ws.claim_ttls() == (120, 3600)


# -- indexing ---------------------------------------------------------------------------------


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
    assert violation.data == {
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
    assert set(types) == {"section.external_edit"}


def test_section_row_resolves_an_exact_key_or_a_unique_last_segment(ws: Workspace) -> None:
    ws.refresh("CLAUDE.md")
    assert ws.section_row("CLAUDE.md", "inventory-service/build").key == "inventory-service/build"
    assert ws.section_row("CLAUDE.md", "testing").key == "inventory-service/testing"
    with pytest.raises(Invalid) as caught:
        ws.section_row("CLAUDE.md", "deployment")
    assert "inventory-service/build" in caught.value.candidates


# -- plumbing --------------------------------------------------------------------------------


def test_the_store_is_opened_on_first_use_and_closed_with_the_workspace(sample: Path) -> None:
    ws = Workspace(sample, "agent-a")
    assert not ws.store_opened
    assert not (sample / ".memkeeper").exists()
    assert ws.store.events() == []
    assert ws.store_opened
    assert (sample / ".memkeeper" / "state.db").is_file()
    ws.close()
    assert not ws.store_opened


def test_relpath_normalises_a_path_and_refuses_one_outside_the_root(ws: Workspace) -> None:
    assert ws.relpath("memory/./status.md") == "memory/status.md"
    with pytest.raises(Invalid, match="outside the memory root"):
        ws.relpath("../elsewhere.md")


def test_record_stamps_the_clocks_time_and_this_agent(sample: Path) -> None:
    clock = FakeClock(1_800_000_000.25)
    ws = Workspace(sample, "agent-z", clock)
    try:
        first = ws.record("task.completed", None, None, {"n": 1})
        clock.advance(61.5)
        second = ws.record("risk.found", "CLAUDE.md", "x", {}, actor="human")
    finally:
        ws.close()
    assert (first.ts, first.actor, first.data) == ("2027-01-15T08:00:00.250Z", "agent-z", {"n": 1})
    assert (second.ts, second.actor, second.path) == (
        "2027-01-15T08:01:01.750Z",
        "human",
        "CLAUDE.md",
    )
    assert second.prev == first.hash


def run_in_thread(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_locked_serialises_writers_of_one_file(ws: Workspace, sample: Path) -> None:
    other = Workspace(sample, "agent-b")
    order: list[str] = []
    holding, release = threading.Event(), threading.Event()

    def first() -> None:
        with ws.locked("CLAUDE.md"):
            holding.set()
            release.wait(5)
            order.append("first leaves")

    def second() -> None:
        with other.locked("CLAUDE.md"):
            order.append("second enters")

    try:
        one = run_in_thread(first)
        assert holding.wait(5)
        two = run_in_thread(second)
        two.join(0.1)
        assert two.is_alive()
        assert order == []
        release.set()
        one.join(5)
        two.join(5)
    finally:
        release.set()
        other.close()
    assert order == ["first leaves", "second enters"]


def test_locks_of_different_files_do_not_wait_for_each_other(ws: Workspace, sample: Path) -> None:
    other = Workspace(sample, "agent-b")
    entered = threading.Event()

    def elsewhere() -> None:
        with other.locked("AGENTS.md"):
            entered.set()

    try:
        with ws.locked("CLAUDE.md"):
            run_in_thread(elsewhere).join(5)
            assert entered.is_set()
    finally:
        other.close()
