"""Splitting Markdown into sections: where they start, their keys and titles, and bad input."""

from __future__ import annotations

import pytest

from memkeeper.errors import Invalid
from memkeeper.markdown.sections import (
    Document,
    Section,
    join,
    slug,
    split,
)

BOM = b"\xef\xbb\xbf"


def keys(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [s.key for s in split(data).sections]


def titles(text: str) -> list[str]:
    return [s.title for s in split(text.encode()).sections]


def only(doc: Document, key: str) -> Section:
    section = doc.get(key)
    assert section is not None, f"no section {key!r} in {[s.key for s in doc.sections]}"
    return section


# --- where sections start -----------------------------------------------------------------


def test_every_atx_level_starts_a_section() -> None:
    doc = split(b"# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six\n")
    assert [s.level for s in doc.sections] == [1, 2, 3, 4, 5, 6]
    assert [s.start_line for s in doc.sections] == [1, 2, 3, 4, 5, 6]


def test_a_section_runs_to_the_next_heading_of_any_level() -> None:
    doc = split(b"## Deep\ntext\n\n# Shallow\nmore\n")
    deep, shallow = doc.sections
    assert doc.text(deep) == b"## Deep\ntext\n\n"
    assert doc.text(shallow) == b"# Shallow\nmore\n"
    assert (deep.start_line, deep.end_line, shallow.start_line, shallow.end_line) == (1, 3, 4, 5)


def test_a_setext_heading_includes_its_underline_in_the_heading() -> None:
    doc = split(b"Title\n=====\nbody\n\nSub\n---\n")
    title, sub = doc.sections
    assert (title.level, sub.level) == (1, 2)
    assert doc.heading(title) == b"Title\n=====\n"
    assert doc.body(title) == b"body\n\n"
    assert doc.heading(sub) == b"Sub\n---\n"


def test_a_setext_heading_may_span_several_lines() -> None:
    doc = split(b"intro\n\nFirst line\nsecond line\n===\nbody\n")
    section = only(doc, "first-line-second-line")
    assert doc.heading(section) == b"First line\nsecond line\n===\n"
    assert section.title == "First line second line"
    assert (section.start_line, section.end_line) == (3, 6)


def test_text_followed_by_dashes_is_a_setext_heading_not_a_rule() -> None:
    assert keys("# A\nnot a rule\n---\n") == ["a", "a/not-a-rule"]


def test_a_rule_after_a_blank_line_is_not_a_heading() -> None:
    assert keys("# A\ntext\n\n---\n") == ["a"]


def test_lines_that_only_look_like_headings_are_text() -> None:
    assert keys("####### seven\n#nospace\n\\# escaped\n") == ["_preamble"]


def test_up_to_three_spaces_of_indent_still_make_a_heading() -> None:
    assert keys("   # Indented\n") == ["indented"]


def test_four_spaces_of_indent_make_code_not_a_heading() -> None:
    assert keys("text\n\n    # code\n") == ["_preamble"]


def test_hash_lines_inside_fences_are_not_headings() -> None:
    text = "# Real\n```\n# not\n```\n~~~md\n# not either\n~~~\n## Also real\n"
    assert keys(text) == ["real", "real/also-real"]


def test_an_unclosed_fence_swallows_every_later_heading() -> None:
    assert keys("# Before\n```\n# a\n\n# b\n") == ["before"]


def test_a_shorter_or_different_closing_fence_does_not_close() -> None:
    assert keys("````\n```\n# in\n~~~~\n# still in\n````\n# out\n") == ["_preamble", "out"]


def test_a_div_html_block_swallows_headings_up_to_the_next_blank_line() -> None:
    assert keys("<div>\n# hidden\n</div>\n# also hidden\n\n# seen\n") == ["_preamble", "seen"]


def test_a_multi_line_html_comment_hides_the_headings_inside_it() -> None:
    assert keys("<!--\n# hidden\n-->\n# seen\n") == ["_preamble", "seen"]


def test_headings_nested_in_list_items_are_not_sections() -> None:
    assert keys("- # in a list\n1. # numbered\n   # continuation\n# Top\n") == ["_preamble", "top"]


def test_headings_nested_in_block_quotes_are_not_sections() -> None:
    assert keys("> # quoted\n>\n> ## deeper\n# Top\n") == ["_preamble", "top"]


# --- front matter ----------------------------------------------------------------------------


def test_front_matter_is_preamble_and_its_lines_are_never_headings() -> None:
    doc = split(b"---\ntitle: x\n# not a heading\n---\n# Real\n")
    assert [s.key for s in doc.sections] == ["_preamble", "real"]
    assert doc.text(doc.sections[0]) == b"---\ntitle: x\n# not a heading\n---\n"


def test_front_matter_may_close_with_three_dots() -> None:
    doc = split(b"---\na: 1\n# hidden\n...\n# Real\n")
    assert [s.key for s in doc.sections] == ["_preamble", "real"]
    assert doc.sections[1].start_line == 5


def test_four_dots_do_not_close_front_matter() -> None:
    assert keys("---\na: 1\n....\n# hidden\n---\n# Real\n") == ["_preamble", "real"]


def test_unclosed_front_matter_is_a_rule_and_the_headings_after_it_count() -> None:
    """The plugin only takes front matter that closes; otherwise `---` is a thematic break."""
    assert keys("---\ntitle: x\n# Heading\n") == ["_preamble", "heading"]


def test_dashes_anywhere_but_the_first_line_are_not_front_matter() -> None:
    assert keys("\n---\na: 1\n---\n# H\n") == ["_preamble", "a-1", "h"]


def test_front_matter_opens_with_three_or_more_dashes_even_with_text_after_them() -> None:
    """What mdit-py-plugins does: the opening line is checked for dashes only."""
    assert keys("-----\na\n-----\n# H\n") == ["_preamble", "h"]
    assert keys("---yaml\n# hidden\n---\n# H\n") == ["_preamble", "h"]


def test_front_matter_after_a_bom_is_still_front_matter() -> None:
    doc = split(BOM + b"---\na: 1\n---\n# H\n")
    assert [s.key for s in doc.sections] == ["_preamble", "h"]
    assert doc.text(doc.sections[0]).startswith(BOM)


# --- BOM, line endings, final newline ---------------------------------------------------------


def test_a_bom_does_not_hide_the_first_heading_and_stays_in_its_bytes() -> None:
    doc = split(BOM + b"# Title\nbody\n")
    (section,) = doc.sections
    assert section.key == "title"
    assert doc.heading(section) == BOM + b"# Title\n"
    assert join(doc) == BOM + b"# Title\nbody\n"


def test_a_bom_before_text_belongs_to_the_preamble() -> None:
    doc = split(BOM + b"intro\n# Title\n")
    assert doc.text(doc.sections[0]) == BOM + b"intro\n"


def test_a_bom_alone_is_a_preamble() -> None:
    assert keys(BOM) == ["_preamble"]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_kind_of_line_ending_splits_at_the_same_lines(newline: bytes) -> None:
    data = newline.join([b"intro", b"# A", b"body", b"", b"B", b"===", b""])
    doc = split(data)
    assert [s.key for s in doc.sections] == ["_preamble", "a", "b"]
    assert doc.heading(doc.sections[1]) == b"# A" + newline
    assert doc.heading(doc.sections[2]) == b"B" + newline + b"===" + newline
    assert [(s.start_line, s.end_line) for s in doc.sections] == [(1, 1), (2, 4), (5, 6)]


def test_mixed_line_endings_are_kept_byte_for_byte() -> None:
    data = b"# A\r\none\rtwo\n# B\r# C\r\n"
    doc = split(data)
    assert [doc.text(s) for s in doc.sections] == [b"# A\r\none\rtwo\n", b"# B\r", b"# C\r\n"]
    assert join(doc) == data


def test_a_missing_final_newline_stays_missing() -> None:
    doc = split(b"# A\ntext\n# B")
    assert doc.text(doc.sections[-1]) == b"# B"
    assert doc.body(doc.sections[-1]) == b""
    assert doc.sections[-1].end_line == 3


def test_unicode_line_separators_do_not_end_lines() -> None:
    """str.splitlines() would split these; Markdown (and memkeeper) does not."""
    doc = split("intro\x0c# not\x0b\x1c\x85\u2028# a heading\n# Real\u2029x\n".encode())
    assert [(s.key, s.start_line) for s in doc.sections] == [("_preamble", 1), ("real-x", 2)]


# --- preamble ---------------------------------------------------------------------------------


def test_an_empty_file_has_no_sections() -> None:
    assert split(b"").sections == ()


def test_a_file_without_headings_is_one_preamble() -> None:
    (section,) = split(b"just\ntext").sections
    assert (section.key, section.title, section.level) == ("_preamble", "", 0)
    assert (section.start, section.body_start, section.end) == (0, 0, 9)
    assert (section.start_line, section.end_line) == (1, 2)


def test_a_single_blank_line_before_the_first_heading_is_a_preamble() -> None:
    doc = split(b"\n# A\n")
    assert [(s.key, doc.text(s)) for s in doc.sections] == [("_preamble", b"\n"), ("a", b"# A\n")]


def test_the_preamble_has_no_heading_and_is_all_body() -> None:
    doc = split(b"intro\n# A\n")
    assert doc.heading(doc.sections[0]) == b""
    assert doc.body(doc.sections[0]) == b"intro\n"


# --- keys ---------------------------------------------------------------------------------


def test_keys_join_ancestors_slugs_with_slashes() -> None:
    text = "# Project\n## Build\n### Linux\n## Test\n# Other\n"
    assert keys(text) == [
        "project",
        "project/build",
        "project/build/linux",
        "project/test",
        "other",
    ]


def test_a_skipped_level_still_nests_under_the_nearest_shallower_heading() -> None:
    assert keys("# A\n### C\n## B\n#### D\n") == ["a", "a/c", "a/b", "a/b/d"]


def test_a_document_may_start_below_level_one() -> None:
    assert keys("### Deep\n## Less\n# Top\n") == ["deep", "less", "top"]


def test_equal_siblings_get_numbered_suffixes_in_file_order() -> None:
    doc = split(b"# A\n## Testing\n## Testing\n## Testing\n")
    assert [(s.key, s.base) for s in doc.sections] == [
        ("a", "a"),
        ("a/testing", "testing"),
        ("a/testing-2", "testing"),
        ("a/testing-3", "testing"),
    ]


def test_equal_titles_under_different_parents_need_no_suffix() -> None:
    assert keys("# A\n## T\n# B\n## T\n") == ["a", "a/t", "b", "b/t"]


def test_children_of_a_suffixed_heading_inherit_its_suffix() -> None:
    assert keys("# A\n## B\n# A\n## B\n") == ["a", "a/b", "a-2", "a-2/b"]


def test_suffixing_keeps_counting_past_keys_that_are_already_taken() -> None:
    doc = split(b"## Testing 2\n## Testing\n## Testing\n## Testing 2\n")
    assert [(s.key, s.base) for s in doc.sections] == [
        ("testing-2", "testing-2"),
        ("testing", "testing"),
        ("testing-3", "testing"),
        ("testing-2-2", "testing-2"),
    ]


def test_a_heading_without_text_is_called_section() -> None:
    assert keys("#\n# !!!\n") == ["section", "section-2"]


def test_a_heading_never_takes_the_preamble_key() -> None:
    assert keys("# _preamble\n") == ["_preamble-2"]
    assert keys("intro\n# _preamble\n") == ["_preamble", "_preamble-2"]


def test_a_stable_id_marker_sets_the_key_and_its_childrens_prefix() -> None:
    text = "# Project\n<!-- memkeeper:section id=release -->\n## Release process\n### Steps\n"
    doc = split(text.encode())
    assert [(s.key, s.base) for s in doc.sections] == [
        ("project", "project"),
        ("release", "release"),
        ("release/steps", "steps"),
    ]
    assert doc.body(doc.sections[0]) == b""


def test_a_stable_id_marker_belongs_to_the_section_it_names() -> None:
    text = b"# A\n\nabout a\n<!-- memkeeper:section id=b -->\n## B\nbody\n"
    doc = split(text)
    a, b = doc.sections
    assert doc.body(a) == b"\nabout a\n"
    assert doc.heading(b) == b"<!-- memkeeper:section id=b -->\n## B\n"
    assert (b.key, b.title, b.start_line, b.end_line) == ("b", "B", 4, 6)
    assert doc.body(b) == b"body\n"


def test_a_stable_id_may_have_segments_dots_and_surrounding_whitespace() -> None:
    text = "  <!--  memkeeper:section   id=team/v1.2_x-y  -->  \r\nTitle\r\n---\r\n"
    doc = split(text.encode())
    assert [(s.key, s.base) for s in doc.sections] == [("team/v1.2_x-y", "v1.2_x-y")]


def test_a_stable_id_marker_before_the_first_heading_survives_a_bom() -> None:
    doc = split(BOM + b"<!-- memkeeper:section id=top -->\n# Anything\n")
    assert [s.key for s in doc.sections] == ["top"]
    assert doc.heading(doc.sections[0]).startswith(BOM + b"<!-- memkeeper:section id=top -->")


def test_a_stable_id_marker_must_be_directly_above_the_heading() -> None:
    assert keys("<!-- memkeeper:section id=x -->\n\n# A\n") == ["_preamble", "a"]


def test_a_malformed_stable_id_marker_is_ignored() -> None:
    text = "<!-- memkeeper:section id=a b -->\n# A\n<!-- memkeeper:section id=/x -->\n# B\n"
    assert keys(text) == ["_preamble", "a", "b"]


def test_repeated_stable_ids_are_made_unique() -> None:
    marker = "<!-- memkeeper:section id=s -->\n"
    assert keys(f"{marker}# A\n{marker}# B\n") == ["s", "s-2"]


# --- titles ---------------------------------------------------------------------------------


def test_titles_drop_link_and_emphasis_markup() -> None:
    assert titles("# [Foo](http://x) *bar* __baz__\n") == ["Foo bar baz"]


def test_titles_resolve_reference_links_defined_later() -> None:
    assert titles("# See [the docs][d]\n\n[d]: https://example.com\n") == ["See the docs"]


def test_titles_keep_code_span_text() -> None:
    assert titles("# Run `make *all*`\n") == ["Run make *all*"]


def test_titles_decode_entities_and_escapes() -> None:
    assert titles("# Tom &amp; Jerry &copy; \\*x\\* &#35;1\n") == ["Tom & Jerry © *x* #1"]


def test_titles_use_an_images_alt_text_and_drop_inline_html() -> None:
    assert titles("# ![The *logo*](logo.png) <b>bold</b><!-- c -->\n") == ["The logo bold"]


def test_titles_drop_closing_hashes_and_surrounding_space() -> None:
    assert titles("#   Spaced out   ##\n") == ["Spaced out"]


def test_title_keys_follow_the_rendered_text() -> None:
    assert keys("# [Foo](url)\n## *Emphasised* `code`\n") == ["foo", "foo/emphasised-code"]


# --- slug ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Release Process", "release-process"),
        ("  C++ & Rust!! ", "c-rust"),
        ("snake_case and-dashes", "snake_case-and-dashes"),
        ("a - b", "a---b"),
        ("v1.2.3", "v1-2-3"),
        ("Привет, мир", "привет-мир"),
        ("हिन्दी भाषा", "हिन्दी-भाषा"),
        ("日本語のテスト", "日本語のテスト"),
        ("Ελληνικά", "ελληνικά"),
        ("🚀 Launch", "launch"),
        ("", "section"),
        ("***", "section"),
        ("--x--", "x"),
    ],
)
def test_slug(title: str, expected: str) -> None:
    assert slug(title) == expected


# --- bad input ------------------------------------------------------------------------------


def test_invalid_utf8_is_refused_with_path_line_and_column() -> None:
    with pytest.raises(Invalid) as caught:
        split(b"# A\nok\nab\xff\n", path="CLAUDE.md")
    error = caught.value
    assert error.message.startswith("CLAUDE.md:3: invalid UTF-8")
    assert (error.fields["line"], error.fields["column"], error.fields["offset"]) == (3, 3, 9)


def test_a_truncated_multibyte_character_is_invalid_utf8() -> None:
    with pytest.raises(Invalid, match=r"^x\.md:1: invalid UTF-8"):
        split("é".encode()[:1], path="x.md")


def test_nul_bytes_are_refused_as_not_text() -> None:
    with pytest.raises(Invalid, match=r"^notes\.md:2: NUL byte .* memory files must be text"):
        split(b"# A\r\nx\x00y\n", path="notes.md")


def test_control_characters_and_noncharacters_are_accepted() -> None:
    data = "# A\x01\x7f\ufffe\uffff\n".encode()
    assert join(split(data)) == data
