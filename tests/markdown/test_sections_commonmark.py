"""Every example of the CommonMark specification splits where markdown-it-py sees headings.

The corpus (tests/data/commonmark-spec-examples.json, see tests/data/README.md) holds many
headings hidden in lists, quotes, fences and HTML blocks, and setext traps. Both sides use the
front-matter plugin, as memkeeper does, so the examples that open with `---` are parsed alike.
Each example is also checked with CRLF line endings and a BOM, which must not move a section.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from memkeeper.markdown.sections import join, split

CORPUS = Path(__file__).resolve().parents[1] / "data" / "commonmark-spec-examples.json"
EXAMPLES: list[dict[str, object]] = json.loads(CORPUS.read_text(encoding="utf-8"))
WITH_FRONT_MATTER = MarkdownIt("commonmark").use(front_matter_plugin)
PLAIN = MarkdownIt("commonmark")


def top_level_heading_lines(md: MarkdownIt, text: str) -> list[int]:
    tokens = md.parse(text)
    return [t.map[0] for t in tokens if t.type == "heading_open" and t.level == 0 and t.map]


def markdown(example: dict[str, object]) -> str:
    text = example["markdown"]
    assert isinstance(text, str)
    return text


@pytest.mark.parametrize(
    "example", EXAMPLES, ids=[f"example-{e['example']}-{e['section']}" for e in EXAMPLES]
)
def test_a_spec_example_splits_where_markdown_it_sees_top_level_headings(
    example: dict[str, object],
) -> None:
    expected = top_level_heading_lines(WITH_FRONT_MATTER, markdown(example))
    as_given = markdown(example).encode()
    crlf_with_bom = b"\xef\xbb\xbf" + as_given.replace(b"\n", b"\r\n")
    for data in (as_given, crlf_with_bom):
        doc = split(data)
        assert join(doc) == data
        assert [s.start_line - 1 for s in doc.sections if s.level > 0] == expected


def test_the_corpus_is_complete_and_has_headings_both_counted_and_nested() -> None:
    def heading_levels(example: dict[str, object]) -> set[int]:
        tokens = PLAIN.parse(markdown(example))
        return {t.level for t in tokens if t.type == "heading_open"}

    assert len(EXAMPLES) == 652
    assert sum(0 in heading_levels(e) for e in EXAMPLES) >= 30
    assert sum(any(level > 0 for level in heading_levels(e)) for e in EXAMPLES) >= 5


def test_only_examples_opening_with_dashes_differ_with_the_front_matter_plugin() -> None:
    differ = [
        e["example"]
        for e in EXAMPLES
        if top_level_heading_lines(PLAIN, markdown(e))
        != top_level_heading_lines(WITH_FRONT_MATTER, markdown(e))
    ]
    assert differ
    assert all(markdown(e).startswith("---") for e in EXAMPLES if e["example"] in differ)
