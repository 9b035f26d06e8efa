"""A section's history: each revision with who, when and how (and its diff), the body at an
earlier revision while it is kept, and revert as a patch like any other."""

from __future__ import annotations

import pytest

from memkeeper import Conflict, Invalid, Memory, Refused

REF = "CLAUDE.md#build"


def two_patches(memory: Memory) -> None:
    memory.patch(REF, "- one\n\n", expect_rev=1)
    memory.patch(REF, "- two\n\n", expect_rev=2)


def test_log_lists_each_revision_newest_first_with_who_when_and_how(memory: Memory) -> None:
    two_patches(memory)
    shown = memory.log(REF)
    assert (shown["key"], shown["rev"]) == ("inventory-service/build", 3)
    revisions = shown["revisions"]
    assert [(r["rev"], r["actor"], r["type"]) for r in revisions] == [
        (3, "agent-a", "section.patched"),
        (2, "agent-a", "section.patched"),
    ]
    assert all(r["ts"] and r["event"] for r in revisions)
    assert "diff" not in revisions[0]


def test_log_with_diff_shows_what_each_revision_changed(memory: Memory) -> None:
    two_patches(memory)
    newest = memory.log(REF, diff=True)["revisions"][0]
    assert newest["diff"].splitlines()[2:] == ["@@ -1,2 +1,2 @@", "-- one", "+- two", " "]


def test_the_body_at_an_earlier_revision_is_read_while_it_is_kept(memory: Memory) -> None:
    two_patches(memory)
    earlier = memory.read_at(REF, 2)
    assert (earlier["rev"], earlier["current_rev"], earlier["content"]) == (2, 3, "- one\n\n")
    with pytest.raises(Invalid, match="rev 9 is not kept"):
        memory.read_at(REF, 9)


def test_revert_is_a_patch_back_to_the_earlier_body(memory: Memory) -> None:
    original = memory.read(REF).content
    two_patches(memory)
    done = memory.revert(REF, to_rev=1, expect_rev=3)
    assert done.rev == 4
    assert memory.read(REF).content == original
    assert memory.events()[-1].type == "section.patched"


def test_revert_with_a_stale_rev_is_a_conflict_and_changes_nothing(memory: Memory) -> None:
    two_patches(memory)
    with pytest.raises(Conflict):
        memory.revert(REF, to_rev=1, expect_rev=2)
    assert memory.read(REF).content == "- two\n\n"


def test_a_private_files_history_is_not_shown(memory: Memory) -> None:
    with pytest.raises(Refused):
        memory.log("memory/scratch/agent-a.md#notes")
