"""``resplit`` against ``split``: for generated documents and edits, re-parsing only the
sections around a change gives exactly the sections a full parse gives (keys, spans, lines,
levels, titles and so the bytes every hash is taken of)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.markdown.resplit import Resplit, changed_span, resplit, stable_of
from memkeeper.markdown.sections import Document, Heading, find_headings, split
from tests.markdown.test_sections_props import documents

PROPERTY = settings(max_examples=1500, deadline=None)

# What an edit puts in: the line kinds that move section boundaries, and plain text.
PIECES = [
    "", "text", "plain line\n", "\n", "\r\n", "\r", "# New\n", "## Sub\n", "Title\n===\n",
    "---\n", "```\n", "```py\ncode\n```\n", "~~~\n", "<div>\n", "</div>\n", "<!--\n", "-->\n",
    "<!-- memkeeper:section id=s -->\n", "[l]: /url\n", "# [l]\n", "> # quoted\n", "- item\n",
    "    indented\n", "\ufeff", "é", "#", "-", "=", "`", "<", "\x00",
]  # fmt: skip


@st.composite
def edits(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """A document and the same document with one span of it replaced."""
    text = draw(documents()).decode("utf-8")
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, min(len(text), start + draw(st.sampled_from([0, 3, 40])))))
    put = "".join(draw(st.lists(st.sampled_from(PIECES), max_size=4)))
    return text.encode(), (text[:start] + put + text[end:]).encode()


def check(old: bytes, new: bytes, span: tuple[int, int, int]) -> Resplit:
    before = split(old)
    refusal = None
    try:
        expected = split(new)
    except Invalid as err:
        refusal = str(err)
    if refusal is not None:
        with pytest.raises(Invalid, match=re.escape(refusal)):
            resplit(before, new, *span)
        return Resplit(before, 0, 0, 0)
    done = resplit(before, new, *span)
    assert done.doc == expected
    first, old_stop, new_stop = done.first, done.old_stop, done.new_stop
    assert done.doc.sections[:first] == before.sections[:first]
    kept = [(s.key, s.level, old[s.start : s.end]) for s in before.sections[old_stop:]]
    moved = [(s.key, s.level, new[s.start : s.end]) for s in done.doc.sections[new_stop:]]
    assert moved == kept
    return done


@PROPERTY
@given(edits())
def test_resplit_equals_a_full_split(edit: tuple[bytes, bytes]) -> None:
    old, new = edit
    check(old, new, changed_span(old, new))


@PROPERTY
@given(edits(), st.integers(0, 2))
def test_any_true_span_of_the_change_gives_the_same(edit: tuple[bytes, bytes], wide: int) -> None:
    """The caller may name more than the bytes that differ (a whole body it replaced)."""
    old, new = edit
    start, old_end, new_end = changed_span(old, new)
    start = max(0, start - wide)
    grow = min(wide, len(old) - old_end)
    check(old, new, (start, old_end + grow, new_end + grow))


@PROPERTY
@given(st.binary(max_size=40), st.binary(max_size=40))
def test_changed_span_covers_exactly_the_difference(old: bytes, new: bytes) -> None:
    start, old_end, new_end = changed_span(old, new)
    same = [a == b for a, b in zip(old, new, strict=False)]
    assert start == (same.index(False) if False in same else len(same))
    assert old[old_end:] == new[new_end:]
    assert start <= old_end
    assert start <= new_end
    if old_end > start and new_end > start:  # the common suffix is the longest left
        assert old[old_end - 1] != new[new_end - 1]


def notes(count: int) -> bytes:
    return b"".join(b"## Note %05d\n\nFact %05d.\n\n" % (n, n) for n in range(count))


def parsed_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every text ``resplit`` hands to markdown-it from now on."""
    sizes: list[int] = []

    def counting(
        data: bytes, text: str, starts: list[int], *, first: bool
    ) -> tuple[list[Heading], bool]:
        sizes.append(len(data))
        return find_headings(data, text, starts, first=first)

    monkeypatch.setattr("memkeeper.markdown.resplit.find_headings", counting)
    monkeypatch.setattr("memkeeper.markdown.resplit.split", lambda *a: pytest.fail("whole"))
    return sizes


def test_a_fenced_body_re_parses_only_its_section_and_the_next_heading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = notes(2000)
    doc = split(old)
    target = doc.sections[1000]
    body = b"\nText\n\n```python\n# not a heading\n```\n\n"
    new = old[: target.body_start] + body + old[target.end :]
    sizes = parsed_sizes(monkeypatch)
    done = resplit(doc, new, target.body_start, target.end, target.body_start + len(body))
    assert sum(sizes) < 200
    assert (done.first, done.old_stop, done.new_stop) == (1000, 1002, 1002)
    monkeypatch.undo()
    assert done.doc == split(new)


def test_an_unclosed_fence_grows_the_window_until_the_file_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = notes(300)
    doc = split(old)
    at = doc.sections[100].body_start
    new = old[:at] + b"```\n" + old[at:]
    sizes = parsed_sizes(monkeypatch)
    done = resplit(doc, new, at, at, at + 4)
    assert len(sizes) <= 10  # 1, 2, 4 … headings further: a few parses, not one per heading
    monkeypatch.undo()
    assert done.doc == split(new)
    assert [s.key for s in done.doc.sections][-1] == "note-00100"


def test_a_heading_added_renames_the_ones_after_it() -> None:
    old = b"# A\n\ntext\n\n# B\n\n## C\n\n# A\n"
    new = old.replace(b"text\n", b"text\n\n# B\n")
    done = check(old, new, changed_span(old, new))
    assert [s.key for s in done.doc.sections] == ["a", "b", "b-2", "b-2/c", "a-2"]


def test_a_link_definition_in_the_change_parses_the_whole_file() -> None:
    old = b"# [x]\n\nbody\n\n# y\n"
    new = old.replace(b"body", b"[x]: /u")
    assert check(old, new, changed_span(old, new)).doc.sections[0].title == "x"


def test_invalid_text_is_refused_with_the_line_in_the_file() -> None:
    old = notes(50)
    at = old.index(b"Fact 00040")
    with pytest.raises(Invalid, match=r"<input>:\d+: invalid UTF-8"):
        resplit(split(old), old[:at] + b"\xff" + old[at:], at, at, at + 1)


@pytest.mark.parametrize(
    ("heading", "key", "stable"),
    [
        (b"<!-- memkeeper:section id=a/b -->\n# T\n", "a/b", "a/b"),
        (b"<!-- memkeeper:section id=a -->\r\n# T\r\n", "a-2", "a"),
        (b"\xef\xbb\xbf<!-- memkeeper:section id=a -->\n# T\n", "a", "a"),
        (b"# T\n", "t", None),
        (b"<!-- memkeeper:section id=a -->\n# T\n", "t", None),
    ],
)
def test_stable_of_reads_the_marker_back(heading: bytes, key: str, stable: str | None) -> None:
    assert stable_of(heading, key) == stable


def test_resplit_keeps_the_sections_it_did_not_touch() -> None:
    old = notes(20)
    doc: Document = split(old)
    target = doc.sections[5]
    new = old[: target.body_start] + b"\nother\n\n" + old[target.end :]
    done = resplit(doc, new, *changed_span(old, new))
    assert all(a is b for a, b in zip(done.doc.sections[:5], doc.sections[:5], strict=True))
