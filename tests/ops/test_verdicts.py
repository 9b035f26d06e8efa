"""The policy's verdicts for a workspace: cached by the policy's hash (in memory, in the store),
the policy file read again only when its stat changes, claim TTLs from its ``leases:``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memkeeper.events import digest
from memkeeper.ops import verdicts
from memkeeper.ops.workspace import Workspace
from memkeeper.policy import loader
from memkeeper.records import Verdict
from tests.ops.conftest import edit

POLICY = ".memkeeper.yaml"
DECISIONS = "memory/decisions.md"
SCRATCH = "memory/scratch/agent-a.md"


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

    monkeypatch.setattr(verdicts, "open", counting_open, raising=False)
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


def test_the_verdicts_of_many_files_cost_one_parse_and_are_cached_for_later_workspaces(
    ws: Workspace, sample: Path, parses: list[bytes | None]
) -> None:
    rels = ["CLAUDE.md", DECISIONS, SCRATCH, "memory/status.md", "README.md"]
    ws.rule("AGENTS.md")  # cached already: not asked for again
    assert len(parses) == 1
    ws.remember_rules(["AGENTS.md", *rels])
    assert len(parses) == 2
    ws.remember_rules(rels)  # all known now: no parse
    later = Workspace(sample, "agent-b")
    try:
        found = [later.rule(rel).file_class for rel in rels]
    finally:
        later.close()
    assert found == ["section-owned", "append-only", "private", "generated", None]
    assert len(parses) == 2
