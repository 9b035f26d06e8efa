"""The contract of reads: what an identity last read of each section is kept per identity,
path and key (a rev never goes back), and compared with the sections' current revs — each
change told once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.coordination import StaleRead
from tests.store.contract.conftest import ROWS, STATE, row

if TYPE_CHECKING:
    from memkeeper.store.protocol import StateStore

ALICE, BOB = "claude-code:s1", "codex:t2"


def _index(store: StateStore) -> None:
    with store.writing():
        store.put_file("CLAUDE.md", STATE)
        store.put_sections("CLAUDE.md", ROWS)


def test_reads_are_kept_per_identity_and_never_go_back(store: StateStore) -> None:
    _index(store)
    assert store.reads_of(ALICE, "CLAUDE.md") == {}
    with store.writing():
        store.record_reads(ALICE, "CLAUDE.md", {"project": 2, "project/build": 1})
        store.record_reads(BOB, "CLAUDE.md", {"project": 2})
    with store.writing():
        store.record_reads(ALICE, "CLAUDE.md", {"project": 1})  # a slower read, landing late
    assert store.reads_of(ALICE, "CLAUDE.md") == {"project": 2, "project/build": 1}
    assert store.reads_of(BOB, "CLAUDE.md") == {"project": 2}
    assert store.reads_of(ALICE, "other.md") == {}
    assert store.stale_reads(ALICE) == []


def test_a_changed_section_is_stale_until_told(store: StateStore) -> None:
    _index(store)
    with store.writing():
        store.record_reads(ALICE, "CLAUDE.md", {"project": 2, "project/build": 1})
        store.record_reads(BOB, "CLAUDE.md", {"project": 2})
    with store.writing():
        store.put_sections("CLAUDE.md", [row("project", 1, 5, b"new\n")])
        store.put_sections("CLAUDE.md", [row("project/build", 2, 3, present=False)])
    assert store.stale_reads(ALICE) == [
        StaleRead("CLAUDE.md", "project", 2, 2, 5, True),
        StaleRead("CLAUDE.md", "project/build", 1, 1, 3, False),
    ]
    with store.writing():
        assert store.tell_read(ALICE, "CLAUDE.md", "project", 5)
        assert not store.tell_read(ALICE, "CLAUDE.md", "project", 5)  # once
        assert not store.tell_read(ALICE, "CLAUDE.md", "nothing-read", 5)
    assert store.stale_reads(ALICE) == [StaleRead("CLAUDE.md", "project/build", 1, 1, 3, False)]
    assert [s.key for s in store.stale_reads(BOB)] == ["project"]  # Alice's telling is hers
    with store.writing():
        store.put_sections("CLAUDE.md", [row("project", 1, 6, b"newer\n")])
    assert store.stale_reads(ALICE)[0] == StaleRead("CLAUDE.md", "project", 2, 5, 6, True)
    with store.writing():
        store.record_reads(ALICE, "CLAUDE.md", {"project": 6})  # read again: nothing to tell
    assert [s.key for s in store.stale_reads(ALICE)] == ["project/build"]
