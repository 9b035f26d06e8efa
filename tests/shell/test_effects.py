"""What a command does to files: a ``Target`` path, or a ``Sweep`` over a tree whose filters
pick the files it reaches."""

from __future__ import annotations

import pytest

from memkeeper.shell.effects import Sweep, Target, each, place
from memkeeper.shell.parse import Word

TREE = Sweep("/r/memory", "rm -r", "/r")


@pytest.mark.parametrize(
    ("path", "reached"),
    [
        ("/r/memory", True),  # depth 0: the top itself
        ("/r/memory/a.md", True),
        ("/r/memory/deep/b.md", True),
        ("/r/memory-old/a.md", False),  # a sibling whose name starts like the top's
        ("/r/CLAUDE.md", False),
    ],
)
def test_a_sweep_reaches_its_top_and_everything_below_it(path: str, reached: bool) -> None:
    assert TREE.covers(path) is reached


def test_depths_bound_what_a_sweep_reaches() -> None:
    below = Sweep("/r", "find", "/r", mindepth=1, maxdepth=1)
    assert [below.covers(p) for p in ("/r", "/r/a.md", "/r/m/b.md")] == [False, True, False]


def test_name_tests_match_the_file_name_with_case_and_negation() -> None:
    named = Sweep("/r", "find", "/r", names=(("*.md", False, False), ("CLAUDE.md", False, True)))
    assert named.covers("/r/memory/a.md")
    assert not named.covers("/r/CLAUDE.md")
    assert not named.covers("/r/notes.txt")
    folded = Sweep("/r", "find", "/r", names=(("claude.md", True, False),))
    assert folded.covers("/r/CLAUDE.md")


def test_paths_left_out_are_not_reached_nor_anything_below_them() -> None:
    sweep = Sweep("/r", "git stash", "/r", excluded=("/r/CLAUDE.md", "/r/memory"))
    assert not sweep.covers("/r/CLAUDE.md")
    assert not sweep.covers("/r/memory/decisions.md")
    assert sweep.covers("/r/AGENTS.md")


def test_moving_a_sweep_maps_its_top_directory_and_exclusions() -> None:
    sweep = Sweep("/link/m", "rm -r", "/link", excluded=("/link/m/x",))
    moved = sweep.moved(lambda p: p.replace("/link", "/real"))
    assert (moved.top, moved.where, moved.excluded) == ("/real/m", "/real", ("/real/m/x",))


@pytest.mark.parametrize(
    ("base", "word", "expected"),
    [
        ("/r", Word("a/../b.md", True), "/r/b.md"),
        ("/r", Word("/abs/x.md", True), "/abs/x.md"),
        (None, Word("/abs/x.md", True), "/abs/x.md"),
        (None, Word("rel.md", True), None),  # a directory nobody can name
        ("/r", Word("$F", False), None),
        ("/r", Word("-", True), None),  # standard input or output
        ("/r", Word("", True), None),
    ],
)
def test_a_word_is_placed_in_its_directory_only_when_it_names_a_path(
    base: str | None, word: Word, expected: str | None
) -> None:
    assert place(base, word) == expected


def test_each_word_naming_a_path_becomes_a_target() -> None:
    words = [Word("a.md", True), Word("$X", False)]
    found = each(lambda w: place("/r", w), words, "rm", follow=False, discards=True)
    assert found == [Target("/r/a.md", "rm", "not-dir", False, True)]
