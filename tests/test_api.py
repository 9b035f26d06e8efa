"""The Python API end to end: external edits before a patch, revisions across absence, events
and suffix references (each operation's own rules are tested in tests/ops/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memkeeper import Conflict, Invalid, Memory
from memkeeper.clock import FakeClock


def test_a_human_save_is_indexed_before_the_revision_check(memory: Memory, sample: Path) -> None:
    assert memory.workspace.store is not None  # a root with a store: the read indexes
    memory.read("CLAUDE.md#build")
    path = sample / "CLAUDE.md"
    path.write_bytes(path.read_bytes().replace(b"make build", b"make wheel"))
    with pytest.raises(Conflict) as caught:
        memory.patch("CLAUDE.md#build", "agent text\n", expect_rev=1)
    assert caught.value.current.rev == 2
    assert "make wheel" in caught.value.current.content
    edits = [e for e in memory.events() if e.type == "section.external_edit"]
    assert [(e.section, e.actor, e.data["rev"]) for e in edits] == [
        ("inventory-service/build", "external", 2)
    ]


def test_a_sections_rev_never_goes_back_when_it_disappears_and_returns(
    memory: Memory, sample: Path
) -> None:
    memory.patch("CLAUDE.md#testing", "v2\n\n", expect_rev=1)
    path = sample / "CLAUDE.md"
    original = path.read_bytes()
    path.write_bytes(original.replace(b"## Testing\n", b"## Checks\n"))
    assert "inventory-service/testing" not in [s.key for s in memory.sections("CLAUDE.md")]
    path.write_bytes(original)
    assert memory.read("CLAUDE.md#testing").rev == 3


def test_events_record_the_agent_and_the_clock(sample: Path) -> None:
    memory = Memory.open(sample, agent="agent-z", clock=FakeClock(1_800_000_000.25))
    memory.patch("CLAUDE.md#build", "x\n", expect_rev=1)
    (event,) = memory.events()
    assert (event.type, event.actor, event.path, event.section) == (
        "section.patched",
        "agent-z",
        "CLAUDE.md",
        "inventory-service/build",
    )
    assert event.ts == "2027-01-15T08:00:00.250Z"
    assert event.data["rev"] == 2


def test_a_suffix_reference_must_be_unambiguous(memory: Memory, sample: Path) -> None:
    (sample / "AGENTS.md").write_text("# A\n## Testing\nx\n# B\n## Testing\ny\n")
    with pytest.raises(Invalid) as caught:
        memory.read("AGENTS.md#testing")
    assert set(caught.value.candidates) == {"a/testing", "b/testing"}
    assert memory.read("AGENTS.md#b/testing").content == "y\n"


def test_the_old_name_of_waiters_still_answers_and_says_it_is_deprecated(sample: Path) -> None:
    memory = Memory.open(sample, agent="agent-a", clock=FakeClock(1_700_000_000.0))
    memory.claim(["memory/"], ttl=60)
    with pytest.warns(DeprecationWarning, match=r"Memory\.waiters\(\)"):
        answer = memory.queue()
    assert answer == memory.waiters()
    assert [claim["targets"] for claim in answer["claims"]] == [["memory/"]]
