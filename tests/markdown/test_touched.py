"""Which sections a change of a Markdown file touches."""

from __future__ import annotations

from hypothesis import given

from memkeeper.markdown.sections import split
from memkeeper.markdown.touched import touched_sections
from tests.markdown.test_sections_props import documents

BASE = b"# Project\n\nintro\n\n## Build\n\nmake\n\n## Testing\n\npytest\n"


def test_a_changed_body_touches_its_section_only() -> None:
    new = BASE.replace(b"pytest", b"pytest -x")
    assert touched_sections(BASE, new) == frozenset({"project/testing"})


def test_a_renamed_heading_touches_its_old_key_and_its_new_one() -> None:
    new = BASE.replace(b"## Build", b"## Building")
    assert touched_sections(BASE, new) == frozenset({"project/build", "project/building"})


def test_an_added_or_deleted_file_touches_every_section() -> None:
    keys = frozenset({"project", "project/build", "project/testing"})
    assert touched_sections(None, BASE) == keys
    assert touched_sections(BASE, None) == keys


def test_a_version_that_is_not_text_makes_it_the_whole_file() -> None:
    assert touched_sections(BASE, b"\xff\xfe") is None


@given(documents())
def test_an_unchanged_file_touches_nothing_and_the_answer_is_symmetric(data: bytes) -> None:
    assert touched_sections(data, data) == frozenset()
    every = frozenset(s.key for s in split(data).sections)
    assert touched_sections(None, data) == every == touched_sections(data, None)
