"""Properties of split/join over generated Markdown, checked against markdown-it-py itself.

Documents are built from a grammar of line kinds that stress where headings can hide (fences,
HTML blocks, lists, quotes, front matter) and joined with random line endings, an optional BOM
and an optional final newline.
"""

from __future__ import annotations

import re
from itertools import product

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from mdit_py_plugins.front_matter import front_matter_plugin

from memkeeper.markdown.lines import STABLE_ID
from memkeeper.markdown.sections import count_lines, join, split

TYPE_CHECKING = False
if TYPE_CHECKING:
    from markdown_it.token import Token

FULL = MarkdownIt("commonmark").use(front_matter_plugin)
RENDERER = RendererHTML()
PROPERTY = settings(max_examples=1000, deadline=None)

# The grammar is a set of precomputed pools of lines, so that drawing a line costs hypothesis
# one or two choices: 1,000 documents per property stay fast (tests/e2e/test_fuzz.py draws
# 1,000 more of hostile text for the same properties, 10,000 under -m slow).
WORDS = ["Testing", "Build", "Привет", "日本語", "*em*", "[link](u)", "`co de`", "&amp;"]
ODD_WORDS = ["_preamble", "a\x0cb", "x\x0by", "\u2028", "\x85", "\x1c", "\\#", "#", "-", "!"]
ODD_WORDS += ["<b>", "![alt *x*](i.png)", "[ref][l]", "&copy;"]
TITLES = ["", *WORDS, *ODD_WORDS, *(f"{a} {b}" for a, b in product(WORDS, ODD_WORDS))]
ATX = [
    f"{' ' * indent}{'#' * hashes} {title}{close}"
    for indent, hashes, title, close in product(
        [0, 0, 1, 3, 4], range(1, 8), TITLES, ["", " #", " ###", "#"]
    )
]
SETEXT = ["===", "---", "  ---", "=", "- - -", "***", "___", "-"]
PARAGRAPH = [*TITLES, "#nospace", "    # indented code", "[l]: /url"]
FENCE = ["```", "~~~", "````", "```py", "   ```", "    ```", "~~~ md", "``` x ```"]
HTML = ["<div>", "</div>", "<!--", "-->", "<!-- c -->", "<pre>", "</pre>", "<details>", "<span>x"]
HTML += ["<script>", "</script>", "<?php", "?>", "<![CDATA[", "]]>", "<!DOCTYPE html>"]
MARKS = ["- ", "* ", "1. ", "2) ", "  ", "   ", "-\t", "> ", ">", "> > ", "- > "]
NESTED = [m + line for m in MARKS for line in [*ATX[:: len(ATX) // 40], *FENCE, *SETEXT, *WORDS]]
FRONT_MATTER = ["---", "...", "title: x", "----"]
MARKER = [
    f"{space}<!-- memkeeper:section id={name} -->{space}"
    for name, space in product(["s", "s/t", "v1.2", "a/b/c", "bad id", "Testing"], ["", " ", "\t"])
]
BLANK = ["", " ", "\t", "    "]
CLOSED_BLOCKS = [
    (opening, *body, closing)
    for (opening, closing), body in product(
        [("```", "```"), ("~~~~", "~~~~"), ("<div>", ""), ("<!--", "-->")],
        [(), ("# in",), ("## a", "text", "b"), ("Title", "---")],
    )
]


def units(*pools: list[str]) -> list[st.SearchStrategy[tuple[str, ...]]]:
    return [st.sampled_from([(line,) for line in pool]) for pool in pools]


# A loose fence or HTML line usually swallows everything after it, so only half of the
# documents may hold them; headings are weighted up so that most documents keep some.
safe_unit = st.one_of(
    *units(ATX, ATX, ATX, ATX, SETEXT, SETEXT, PARAGRAPH, PARAGRAPH),
    *units(BLANK, MARKER, NESTED, FRONT_MATTER),
    st.sampled_from(CLOSED_BLOCKS),
)
risky_unit = st.one_of(safe_unit, *units(FENCE + HTML))
front_matter_unit = st.one_of(*units(FRONT_MATTER, ATX, PARAGRAPH))
newline = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    size = draw(st.integers(0, 30))  # hypothesis keeps plain lists short
    unit = risky_unit if draw(st.booleans()) else safe_unit
    lines = [text for each in draw(st.lists(unit, min_size=size, max_size=size)) for text in each]
    if draw(st.integers(0, 3)) == 0:
        head = [text for each in draw(st.lists(front_matter_unit, max_size=4)) for text in each]
        lines = ["---", *head, *lines]
    endings = [draw(newline) for _ in lines]
    text = "".join(body + end for body, end in zip(lines, endings, strict=True))
    drop_final_newline = draw(st.booleans())
    if lines and drop_final_newline:
        text = text.removesuffix(endings[-1])
    bom = "\ufeff" if draw(st.booleans()) else ""
    return (bom + text).encode()


def normalized(data: bytes) -> str:
    return re.sub(r"\r\n?", "\n", data.decode().removeprefix("\ufeff"))


def top_level_headings(text: str) -> list[tuple[int, int, str]]:
    """First line, line after and plain title of each top-level heading in a full parse."""
    tokens = FULL.parse(text)
    return [
        (token.map[0], token.map[1], plain_text(tokens[index + 1].children or []))
        for index, token in enumerate(tokens)
        if token.type == "heading_open" and token.level == 0 and token.map
    ]


def owner(chunks: list[str], first: int) -> int:
    """The first line of the section whose heading is on line ``first``: the line above when
    it is a stable-id marker, which belongs to the heading it names."""
    return first - 1 if first > 0 and STABLE_ID.fullmatch(chunks[first - 1]) else first


def plain_text(children: list[Token]) -> str:
    """markdown-it's own text rendering, less inline HTML, with line breaks as spaces."""
    kept = [child for child in children if child.type != "html_inline"]
    return RENDERER.renderInlineAsText(kept, FULL.options, {}).replace("\n", " ").strip()


@PROPERTY
@given(documents())
def test_join_of_split_gives_back_every_byte(data: bytes) -> None:
    assert join(split(data)) == data


@PROPERTY
@given(documents())
def test_sections_are_contiguous_and_cover_the_input(data: bytes) -> None:
    sections = split(data).sections
    assert [s.start for s in sections[1:]] == [s.end for s in sections[:-1]]
    assert (sections[0].start, sections[-1].end) == (0, len(data)) if data else sections == ()
    for s in sections:
        assert s.start <= s.body_start <= s.end
        assert s.start < s.end
        assert s.start_line == count_lines(data[: s.start]) + 1
        assert s.end_line == count_lines(data[: s.end])


@PROPERTY
@given(documents())
def test_keys_are_unique_and_end_with_their_base(data: bytes) -> None:
    sections = split(data).sections
    assert len({s.key for s in sections}) == len(sections)
    for s in sections:
        last = s.key.rpartition("/")[2]
        assert last == s.base or re.fullmatch(re.escape(s.base) + r"-(?:[2-9]|[1-9]\d+)", last)


@PROPERTY
@given(documents())
def test_sections_and_titles_match_a_full_markdown_it_parse(
    data: bytes,
) -> None:
    doc = split(data)
    text = normalized(data)
    chunks = re.findall(r"[^\n]*\n|[^\n]+$", text)
    expected = top_level_headings(text)
    headed = [s for s in doc.sections if s.level > 0]
    starts = [owner(chunks, first) for first, _, _ in expected]  # a marker above: its line
    assert [s.start_line - 1 for s in headed] == starts
    assert [s.title for s in headed] == [title for _, _, title in expected]
    for section, start, (_, after, _) in zip(headed, starts, expected, strict=True):
        assert normalized(doc.heading(section)) == "".join(chunks[start:after])
    has_preamble = bool(data) and (not expected or starts[0] > 0)
    assert (doc.sections[:1] != () and doc.sections[0].level == 0) == has_preamble
