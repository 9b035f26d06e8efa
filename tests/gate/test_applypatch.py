"""Codex's apply_patch envelopes, parsed into file operations (the grammar in openai/codex
tool_apply_patch.lark)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.gate.applypatch import BadPatch, FileOp, is_patch, parse_patch


def test_an_add_is_the_whole_new_file() -> None:
    patch = "*** Begin Patch\n*** Add File: CLAUDE.md\n+# Memory\n+\n+Rewritten.\n*** End Patch\n"
    assert parse_patch(patch) == (FileOp("add", "CLAUDE.md", "# Memory\n\nRewritten.\n"),)


def test_an_update_becomes_old_and_new_text_per_chunk() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: memory/decisions.md\n@@\n"
        "-- 2026-09-01: use sqlite\n+- 2026-09-01: use postgres\n"
        "@@ ## Later\n context\n+added\n*** End of File\n*** End Patch"
    )
    (op,) = parse_patch(patch)
    assert op.kind == "update"
    assert op.path == "memory/decisions.md"
    assert op.edits == (
        ("- 2026-09-01: use sqlite\n", "- 2026-09-01: use postgres\n"),
        ("context\n", "context\nadded\n"),
    )


def test_several_files_a_move_a_delete_and_an_environment_line() -> None:
    patch = (
        "*** Begin Patch\n*** Environment ID: env-1\n"
        "  *** Update File: a.md\n*** Move to: memory/b.md\n@@\n-x\n+y\n"
        "*** Delete File: memory/decisions.md\n"
        "*** Add File: notes.md\n+hi\n"
        "*** End Patch\n"
    )
    ops = parse_patch(patch)
    assert [(o.kind, o.path, o.move_to) for o in ops] == [
        ("update", "a.md", "memory/b.md"),
        ("delete", "memory/decisions.md", None),
        ("add", "notes.md", None),
    ]


def test_a_patch_inside_a_shell_heredoc_is_found() -> None:
    command = (
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: CLAUDE.md\n*** End Patch\nEOF\n"
    )
    assert is_patch(command)
    assert parse_patch(command) == (FileOp("delete", "CLAUDE.md"),)


@pytest.mark.parametrize(
    ("patch", "says"),
    [
        ("*** Update File: a.md\n", "no '*** Begin Patch'"),
        ("*** Begin Patch\n*** Add File: a.md\n+x\n", "no '*** End Patch'"),
        ("*** Begin Patch\n*** End Patch\n", "touches no file"),
        ("*** Begin Patch\n*** Frobnicate: a.md\n*** End Patch\n", "expected a file header"),
        ("*** Begin Patch\n*** Update File: a.md\n@@\n?x\n*** End Patch\n", "not a change line"),
        ("*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n", "with no path"),
    ],
)
def test_what_is_not_a_patch_says_why(patch: str, says: str) -> None:
    with pytest.raises(BadPatch, match=re.escape(says)):
        parse_patch(patch)


lines = st.lists(st.text(st.characters(blacklist_categories=["Cs", "Cc"]), max_size=20), max_size=6)


@given(lines, lines)
def test_an_update_chunk_round_trips_its_removed_and_added_lines(
    removed: list[str], added: list[str]
) -> None:
    body = "".join(f"-{line}\n" for line in removed) + "".join(f"+{line}\n" for line in added)
    patch = f"*** Begin Patch\n*** Update File: f.md\n@@\n{body}*** End Patch\n"
    (op,) = parse_patch(patch)
    expected = ("".join(f"{x}\n" for x in removed), "".join(f"{x}\n" for x in added))
    assert op.edits == ((expected,) if removed or added else ())
