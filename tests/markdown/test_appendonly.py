"""Append-only history: entries, where they go, and what counts as rewriting history."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.markdown.appendonly import (
    append_entry,
    entry_rows,
    entry_title,
    first_changed_line,
    leaves_block_open,
    make_entry,
)
from memkeeper.markdown.revisions import rows_for
from memkeeper.markdown.sections import split

NOON = 1_800_000_000.0  # 2027-01-15 08:00 UTC


def test_an_entry_without_a_template_is_the_text_with_one_final_newline() -> None:
    assert make_entry(None, "\n\nUse etcd.\n\n", "agent-a", NOON) == "Use etcd.\n"


def test_the_template_fills_date_time_agent_and_text() -> None:
    entry = make_entry("## {date} {time} — {agent}\n\n{text}\n", "Use etcd.", "agent-a", NOON)
    assert entry == "## 2027-01-15 08:00 UTC — agent-a\n\nUse etcd.\n"


def test_braces_in_the_text_are_not_placeholders() -> None:
    assert make_entry("{text}", "{agent} {{x}}", "a", NOON) == "{agent} {{x}}\n"


def test_an_empty_entry_is_refused() -> None:
    with pytest.raises(Invalid, match="entry is empty"):
        make_entry(None, " \n\t\n", "a", NOON)


def test_an_entry_goes_after_a_blank_line_in_the_files_line_endings() -> None:
    assert append_entry(b"# Log\r\n\r\nold\r\n", "new\nlines\n") == (
        b"# Log\r\n\r\nold\r\n\r\nnew\r\nlines\r\n"
    )
    assert append_entry(b"# Log\n\nold", "new\n") == b"# Log\n\nold\n\nnew\n"
    assert append_entry(b"# Log\n\n", "new\n") == b"# Log\n\nnew\n"
    assert append_entry(b"", "first\n") == b"first\n"


@settings(max_examples=300, deadline=None)
@given(old=st.binary(max_size=60), entry=st.text(min_size=1, max_size=30))
def test_an_append_always_extends_the_file(old: bytes, entry: str) -> None:
    assert first_changed_line(old, append_entry(old, entry)) is None


def test_a_rewrite_names_the_first_changed_line() -> None:
    old = b"# Log\n\n## one\n\nfirst\n"
    assert first_changed_line(old, old + b"\nmore\n") is None
    assert first_changed_line(old, old.replace(b"first", b"FIRST")) == 5
    assert first_changed_line(old, b"# Log\n") == 2
    assert first_changed_line(old, b"") == 1


def test_an_entry_title_is_its_first_line_without_heading_marks() -> None:
    assert entry_title("\n## 2026-11-29 Use etcd\n\nbecause\n") == "2026-11-29 Use etcd"
    assert entry_title("") == ""
    assert len(entry_title("x" * 300)) == 120


def test_an_open_fence_at_the_end_would_swallow_later_entries() -> None:
    assert leaves_block_open(b"# Log\n\n```\ncode\n")
    assert leaves_block_open(b"# Log\n\n<!-- a comment never closed\n")
    assert not leaves_block_open(b"# Log\n\n<div>\n")  # a blank line ends it
    assert not leaves_block_open(b"# Log\n\n```\ncode\n```\n")
    assert not leaves_block_open(b"# Log\n\nplain")
    assert not leaves_block_open(b"")


# --- the append's index from the last section alone ------------------------------------------

ENTRY_TEXTS = [
    "## 2026-01-01 — a\n\nWe chose SQLite.\n",
    "## Note\n\nsame title again\n",
    "### Detail\n\nnested under the last\n",
    "plain text, no heading\n",
    "## A\n\n```\n# fenced\n```\n\n## B\n\ntext\n",
    "<!-- memkeeper:section id=s -->\n## Named\n",
    "# Top again\n",
    "## [link] title\n",
]


@given(
    log=st.lists(st.sampled_from(ENTRY_TEXTS), max_size=6),
    opening=st.sampled_from(
        ["", "# Decisions\n\n", "intro\n\n", "---\n", "[x]: /u\n\n", "# Bare", "# Bare\r"]
    ),
    entry=st.sampled_from(ENTRY_TEXTS),
    crlf=st.booleans(),
)
@settings(max_examples=400, deadline=None)
def test_entry_rows_are_the_rows_of_a_whole_parse(
    log: list[str], opening: str, entry: str, crlf: bool
) -> None:
    """Differential: the rows from the last section on, indexed from it alone, are those a
    whole parse of the file after the append gives (when ``entry_rows`` answers at all)."""
    data = opening.encode()
    for text in log:
        data = append_entry(data, text)
    if log and opening.startswith("# Bare"):
        data += b"## Last bare heading"  # the file ends on a heading, no line ending
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    new = append_entry(data, entry)
    before = rows_for(split(data))
    assume(before)
    rows = entry_rows(before[-1], new[len(data) :], (r.key for r in before), data)
    if rows is not None:
        assert rows == rows_for(split(new))[len(before) - 1 :]


def test_entry_rows_key_a_repeated_title_after_the_ones_before() -> None:
    data = b"# Log\n\n## Note\n\nfirst\n\n## Note\n\nsecond\n"
    before = rows_for(split(data))
    new = append_entry(data, "## Note\n\nthird\n")
    rows = entry_rows(before[-1], new[len(data) :], (r.key for r in before), data)
    assert rows is not None
    assert [row.key for row in rows] == ["log/note-2", "log/note-3"]


def test_entry_rows_leave_a_heading_above_the_last_ones_level_to_a_whole_parse() -> None:
    data = b"# Log\n\n## Note\n\nfirst\n"
    before = rows_for(split(data))
    new = append_entry(data, "# Other\n")
    assert entry_rows(before[-1], new[len(data) :], (r.key for r in before), data) is None


def test_leaves_block_open_within_the_last_body_agrees_with_the_whole_file() -> None:
    for body in (b"\ntext\n", b"\n```\nopen\n", b"\n<div>\n", b"\n<!--\n"):
        data = b"# Log\n\n## Note\n" + body
        assert leaves_block_open(body, newline=b"\n", within=True) is leaves_block_open(data)
