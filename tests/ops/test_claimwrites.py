"""Claims and the writes they cover: a claim's targets resolved (sections to their full key,
paths to the directory claimed from), advisory claims warn a write, strict ones and fences
refuse it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper import Busy, Invalid, Memory, Refused
from memkeeper.fs import crash

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock


def test_a_section_target_carries_the_full_key(agents: Callable[[str], Memory]) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("CLAUDE.md#build")
    assert claim.targets == ("CLAUDE.md#inventory-service/build",)
    assert b.claim("CLAUDE.md#testing").targets == ("CLAUDE.md#inventory-service/testing",)
    for overlapping in ("CLAUDE.md", "CLAUDE.md#inventory-service", "*.md"):
        with pytest.raises(Busy):
            b.claim(overlapping)


def test_a_section_target_in_a_private_file_copies_nothing_into_the_store(
    agents: Callable[[str], Memory],
) -> None:
    a = agents("a")
    claim = a.claim("memory/scratch/agent-a.md#agent-a-scratchpad")
    assert claim.targets == ("memory/scratch/agent-a.md#agent-a-scratchpad",)
    store = a.workspace.store
    assert store.file_state("memory/scratch/agent-a.md") is None
    assert store.sections("memory/scratch/agent-a.md", with_absent=True) == []


def test_an_unknown_section_or_a_bad_target_is_invalid(agents: Callable[[str], Memory]) -> None:
    a = agents("a")
    with pytest.raises(Invalid) as caught:
        a.claim("CLAUDE.md#nope")
    assert "inventory-service/build" in caught.value.candidates
    for bad in ("../outside", "src/[z-a]"):
        with pytest.raises(Invalid):
            a.claim(bad)
    with pytest.raises(Invalid):
        a.claim("x", mode="exclusive")  # type: ignore[arg-type]
    assert a.events() == []


def test_a_patch_into_an_advisory_claim_succeeds_with_a_warning(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("CLAUDE.md#build", ttl=100)
    clock.advance(40)
    result = b.patch("CLAUDE.md#build", "b was here\n", expect_rev=1)
    assert result.rev == 2
    (warning,) = result.warnings
    assert "a holds write claim" in warning
    assert claim.id in warning
    assert "60 s left" in warning
    assert a.patch("CLAUDE.md#build", "a too\n", expect_rev=2).warnings == ()


def test_a_strict_claim_refuses_another_agents_patch(
    agents: Callable[[str], Memory], sample: Path
) -> None:
    a, b = agents("a"), agents("b")
    before = (sample / "CLAUDE.md").read_bytes()
    claim = a.claim("CLAUDE.md", strict=True)
    with pytest.raises(Refused) as caught:
        b.patch("CLAUDE.md#build", "b was here\n", expect_rev=1)
    refused = caught.value
    assert refused.reason == "claimed"
    assert f"a holds strict write claim {claim.id}" in refused.message
    assert refused.holders[0]["expires_at"] == "2023-11-14T22:15:20.000Z"
    assert (sample / "CLAUDE.md").read_bytes() == before
    assert b.patch("AGENTS.md#roster", "fine\n", expect_rev=1).rev == 2


def test_a_strict_policy_rule_makes_an_advisory_claim_strict(
    agents: Callable[[str], Memory],
) -> None:
    a, human = agents("a"), agents("human")
    a.claim("CLAUDE.md#release-process")
    with pytest.raises(Refused) as caught:
        human.patch("CLAUDE.md#release-process", "tag it\n", expect_rev=1)
    assert caught.value.reason == "claimed"
    a.claim("CLAUDE.md#build")
    assert human.patch("CLAUDE.md#build", "ok\n", expect_rev=1).warnings != ()


def test_a_fenced_patch_lands_only_under_the_writers_own_live_covering_claim(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    mine = a.claim("CLAUDE.md#inventory-service", ttl=10)
    reading = a.claim("AGENTS.md", mode="read")
    other = b.claim("memory/architecture.md")
    assert a.patch("CLAUDE.md#build", "ok\n", expect_rev=1, claim=mine.id).rev == 2
    refusals: list[Callable[[], object]] = [
        lambda: a.patch("memory/architecture.md#inventory", "x\n", expect_rev=1, claim=other.id),
        lambda: a.patch("memory/architecture.md#inventory", "x\n", expect_rev=1, claim=mine.id),
        lambda: a.patch("AGENTS.md#roster", "x\n", expect_rev=1, claim=reading.id),
        lambda: a.patch("CLAUDE.md#build", "x\n", expect_rev=2, claim="c404"),
    ]
    messages = []
    for write in refusals:
        with pytest.raises(Refused) as caught:
            write()
        assert caught.value.reason == "claimed"
        messages.append(caught.value.message)
    assert "belongs to b" in messages[0]
    assert "does not cover" in messages[1]
    assert "read claim" in messages[2]
    clock.advance(10)
    with pytest.raises(Refused) as late:
        a.patch("CLAUDE.md#build", "late\n", expect_rev=2, claim=mine.id)
    assert "expired" in late.value.message
    assert a.read("CLAUDE.md#build").content == "ok\n"


@pytest.mark.parametrize("stall_at", ["patch.before_write", "patch.before_commit"])
def test_a_fenced_patch_that_stalls_past_its_claims_expiry_lands_nothing(
    agents: Callable[[str], Memory],
    clock: FakeClock,
    sample: Path,
    monkeypatch: pytest.MonkeyPatch,
    stall_at: str,
) -> None:
    """Issue 22 item 8: the fence is checked again just before the commit, after the write's
    slow parts; a write that stalled there past its claim's expiry is refused and rolled back
    (before, it landed after the claim expired, perhaps after another agent was granted it)."""
    a = agents("a")
    mine = a.claim("CLAUDE.md#build", ttl=10)
    before = (sample / "CLAUDE.md").read_bytes()
    events = len(a.events())
    real = crash.crashpoint

    def stall(name: str) -> None:
        if name == stall_at:
            clock.advance(10)  # stopped, swapped out, a slow disk: the claim runs out
        real(name)

    monkeypatch.setattr(crash, "crashpoint", stall)
    with pytest.raises(Refused) as caught:
        a.patch("CLAUDE.md#build", "late\n", expect_rev=1, claim=mine.id)
    assert caught.value.reason == "claimed"
    assert f"claim {mine.id} is expired" in caught.value.message
    assert "while this write was under way: nothing was written" in caught.value.message
    assert (sample / "CLAUDE.md").read_bytes() == before
    assert a.read("CLAUDE.md#build").rev == 1
    assert a.events()[events:] == []  # no section.patched: its transaction rolled back
    assert [p.name for p in (sample / ".memkeeper").rglob("*.tmp*")] == []


def test_a_fenced_patch_that_stalls_within_its_claims_ttl_lands(
    agents: Callable[[str], Memory], clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = agents("a")
    mine = a.claim("CLAUDE.md#build", ttl=10)
    real = crash.crashpoint

    def stall(name: str) -> None:
        if name == "patch.before_commit":
            clock.advance(9.9)
        real(name)

    monkeypatch.setattr(crash, "crashpoint", stall)
    assert a.patch("CLAUDE.md#build", "in time\n", expect_rev=1, claim=mine.id).rev == 2


def test_a_fenced_patch_stalled_in_real_time_past_its_claim_lands_nothing_on_either_store(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch, store_kind: str
) -> None:
    """The same on the store's own clock (SQLite: the uptime; etcd: the claim's lease, whose
    key the write's commit compares): the write stalls until the claim is over."""
    mine = memory.claim("CLAUDE.md#build", ttl=1)
    other = Memory.open(sample, agent="x")
    real, stalled = crash.crashpoint, list[str]()

    def over() -> bool:
        if store_kind == "sqlite":  # the stalled write holds the store's lock: read the clock
            return memory.claim_now() >= mine.expires_at
        found = other.workspace.store.claim_row(mine.id)  # read alone: no sweep writes
        return found is None or not found.alive

    def stall(name: str) -> None:
        if name == "patch.before_commit" and not stalled:
            stalled.append(name)
            deadline = time.monotonic() + 10
            while not over():
                assert time.monotonic() < deadline, "the claim outlived its TTL"
                time.sleep(0.2)
        real(name)

    monkeypatch.setattr(crash, "crashpoint", stall)
    with pytest.raises(Refused) as caught:
        memory.patch("CLAUDE.md#build", "late\n", expect_rev=1, claim=mine.id)
    assert caught.value.reason == "claimed"
    assert stalled
    assert memory.read("CLAUDE.md#build").rev == 1
    assert "late" not in (sample / "CLAUDE.md").read_text()
    other.close()


def test_a_path_target_is_resolved_against_the_directory_claimed_from(
    agents: Callable[[str], Memory], sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = agents("a")
    monkeypatch.chdir(sample.parent)  # outside the root: relative to the root
    assert a.claim("inventory/").targets == ("inventory/",)
    monkeypatch.chdir(sample / "src")
    assert a.claim("inventory/").targets == ("src/inventory/",)
    monkeypatch.chdir(sample)
    assert a.claim("inventory/").targets == ("inventory/",)
