"""The fast splitter: which files it takes, and a differential property — for every document,
``split`` with the fast path gives exactly what ``split`` gives through markdown-it alone."""

from __future__ import annotations

import random
from itertools import product
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.markdown import fastsplit
from memkeeper.markdown.sections import Document, split

PROPERTY = settings(max_examples=1000, deadline=None)

PLAIN = b"# Title\n\nSome text.\n\n## Part ##\n- a bullet\n  - nested\n> quoted\n\n    # code\n"


def by_markdown_it(data: bytes) -> Document:
    with mock.patch.object(fastsplit, "headings", return_value=None):
        return split(data)


def test_a_plain_file_takes_the_fast_path_with_markdown_its_titles() -> None:
    found = fastsplit.headings(PLAIN.decode())
    assert found == [(0, 1, "Title"), (4, 2, "Part")]
    assert split(PLAIN) == by_markdown_it(PLAIN)


@pytest.mark.parametrize(
    ("rest", "title"),
    [
        ("", ""),
        (" #", ""),
        (" a #", "a"),
        (" a#", "a#"),
        (" a ##  \t", "a"),
        ("\t\u00a0a\u00a0", "a"),
    ],
)
def test_titles_are_cut_as_markdown_its_heading_rule_cuts_them(rest: str, title: str) -> None:
    assert fastsplit.headings(f"#{rest}\n") == [(0, 1, title)]


@pytest.mark.parametrize(
    "text",
    [
        "Title\n===\n",  # setext H1
        "Title\n---\n",  # setext H2
        "---\ntitle: x\n---\n# A\n",  # front matter
        "-- x\n",  # front matter's first character: markdown-it's plugin decides
        "   # indented heading\n",
        "```\n# in a fence\n```\n",
        "  ~~~\n# in a fence\n",
        "<div>\n# in html\n",
        "<!-- open\n# in a comment\n-->\n",
        "[a]: /url\n# [a]\n",  # a reference changes the title's text
        "- x\n\n    [a]: /url\n# [a]\n",
        "> " * 12 + "deep\n# A\n",  # markdown-it's maxNesting
        "- " * 6 + "deep\n# A\n",
    ],
)
def test_a_construct_that_can_move_a_heading_goes_to_markdown_it(text: str) -> None:
    assert fastsplit.headings(text) is None
    assert fastsplit.headings(text.replace("\n", "\r\n")) is None


def test_line_numbers_count_every_kind_of_line_ending() -> None:
    assert fastsplit.headings("a\r\nb\rc\n# D\r# E") == [(3, 1, "D"), (4, 1, "E")]


def test_a_comment_closed_on_its_line_stays_on_the_fast_path() -> None:
    text = "<!-- memkeeper:section id=x -->\n# A\n<!-->\n# B\n"
    assert fastsplit.headings(text) == [(1, 1, "A"), (3, 1, "B")]


# Lines the fast path accepts (most of them), then every construct NOTES.md lists as able to
# make a top-level heading appear or disappear, each drawn less often.
TITLES = [
    "",
    "Note 1",
    "[a]",
    "[b][a]",
    "*em* and `code`",
    "[link](u)",
    "a #",
    "b ##  ",
    "Привет",
    "x\u00a0",
    "#",
]
ATX = [f"{'#' * n}{sep}{t}" for n, sep, t in product([1, 2, 3, 6, 7], [" ", "\t", ""], TITLES)]
PLAIN_LINES = ["", "text", "Text with # inside", "#nospace", "- bullet", "* star", "+ plus"]
PLAIN_LINES += ["1. one", "2) two", "> quote", "> # quoted", ">", "- # listed", "  - nested"]
PLAIN_LINES += ["    # code", "\t# tab code", "    ```", "    <div>", "    ---", "***", "___"]
PLAIN_LINES += [
    "- - -",
    "<!-- memkeeper:section id=s/t -->",
    "  <!-- memkeeper:section id=a -->\t",
    "<!-- c --> tail",
    " ",
    "\t",
]
PLAIN_LINES += ["==x", "--x", "a]b", "[x] done", "- [link](u)", "a\x0cb", "\u2028", "- > ```"]
RISKY = ["===", "---", "-", "- ", "  ---", "   # h", " ## h", "```", "~~~", "   ```", "<div>"]
RISKY += ["</div>", "<!--", "-->", "<pre>", "<span>x", "[a]: /u", "- [a]: /u", "> [a]: /u"]
RISKY += [
    "[a",
    "b]: /u 'x",
    "> " * 21 + "x",
    "- " * 10 + "x",
    "1. " * 10 + "x",
    "      " * 3 + "- x",
    "title: x",
]
plain_line = st.one_of(st.sampled_from(ATX), st.sampled_from(PLAIN_LINES))
risky_line = st.one_of(plain_line, plain_line, st.sampled_from(RISKY))


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """Half of them of lines the fast path takes (it may still refuse a few, for "---" or a
    BOM's neighbour), half with constructs only markdown-it can tell, all line endings."""
    lines = draw(st.lists(risky_line if draw(st.booleans()) else plain_line, max_size=30))
    ending = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    ends = [draw(st.sampled_from(["\n", "\r\n", "\r"])) if ending == "mixed" else ending]
    text = "".join(text + ends[i % len(ends)] for i, text in enumerate(lines))
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    bom = "\ufeff" if draw(st.integers(0, 5)) == 0 else ""
    return (bom + text).encode()


@PROPERTY
@given(documents())
def test_the_fast_path_splits_exactly_as_markdown_it(data: bytes) -> None:
    assert split(data) == by_markdown_it(data)  # every field: keys, spans, levels, titles


def test_the_property_reaches_the_fast_path() -> None:
    """Documents of plain lines take the fast path, or the property above tests nothing."""
    rng = random.Random(26)
    pool = ATX + PLAIN_LINES
    for _ in range(200):
        lines = [rng.choice(pool) for _ in range(rng.randrange(1, 30))]
        text = "\n".join(["text", *lines])  # a first "-" goes to front matter's plugin
        assert fastsplit.headings(text) is not None, text
