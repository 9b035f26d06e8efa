"""Append-only history: entries, where they go, and what counts as rewriting history."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.markdown.appendonly import (
    append_entry,
    entry_title,
    first_changed_line,
    leaves_block_open,
    make_entry,
)

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
