"""CODEOWNERS read as GitHub reads it: gitignore-style patterns, the last matching line wins,
a line without owners leaves a path unowned."""

from __future__ import annotations

from memkeeper.meetings.codeowners import owners, owners_of

FILE = """\
# default owners
*           @org/everyone
/docs/      @org/docs   @alice
*.md        @org/writers
CLAUDE.md   @org/agents # the agents' memory
/docs/private.md
"""


def test_the_last_matching_line_wins() -> None:
    assert owners_of(FILE, "src/app.py") == ("@org/everyone",)
    assert owners_of(FILE, "docs/guide.txt") == ("@org/docs", "@alice")
    assert owners_of(FILE, "docs/guide.md") == ("@org/writers",)
    assert owners_of(FILE, "sub/CLAUDE.md") == ("@org/agents",)


def test_a_line_without_owners_leaves_the_path_unowned() -> None:
    assert owners_of(FILE, "docs/private.md") == ()


def test_targets_name_their_file_and_owners_come_once_in_order() -> None:
    assert owners(FILE, ["CLAUDE.md#project/build", "docs/", "notes.md"]) == (
        "@org/agents",
        "@org/docs",
        "@alice",
        "@org/writers",
    )
    assert owners("", ["CLAUDE.md"]) == ()
