"""Generated-region markers: parsing, checksums, filling in rendered text, patch guards."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.regions.markers import (
    Region,
    checksum,
    fill,
    looks_like_marker,
    parse,
    patch_problem,
)
from tests.strategies import documents

START = b"<!-- memkeeper:generated source=claims -->\n"
END = b"<!-- memkeeper:end -->\n"


def only(data: bytes) -> Region:
    (region,) = parse(data, "s.md")
    return region


def test_a_region_spans_from_its_start_marker_to_its_end_marker() -> None:
    data = b"# S\n\n" + START + b"old\n" + END + b"after\n"
    region = only(data)
    assert (region.id, region.source, region.args) == ("claims", "claims", ())
    assert (region.start_line, region.end_line) == (3, 5)
    assert region.text(data) == b"old\n"
    assert data[region.start : region.text_start] == START
    assert data[region.text_end : region.end] == END
    assert region.checksum is None


def test_marker_arguments_and_ids_are_read() -> None:
    data = b"<!-- memkeeper:generated source=events id=recent types=a,b limit=3 -->\n" + END
    region = only(data)
    assert (region.id, region.source) == ("recent", "events")
    assert region.args == (("limit", "3"), ("types", "a,b"))


def test_an_end_marker_without_checksum_is_never_edited() -> None:
    data = START + b"anything a human wrote\n" + END
    assert not only(data).edited(data)


def test_a_checksum_that_does_not_match_means_a_hand_edit() -> None:
    filled = fill(START + END, parse(START + END, "s.md"), {"claims": "one\n"})
    assert not only(filled).edited(filled)
    edited = filled.replace(b"one", b"two")
    assert only(edited).edited(edited)


def test_the_checksum_ignores_line_ending_style() -> None:
    assert checksum(b"a\r\nb\r\n") == checksum(b"a\nb\n") == checksum(b"a\rb\r")
    assert checksum(b"a\nb\n") != checksum(b"a\nb")
    assert len(checksum(b"")) == 16


def test_fill_writes_text_and_checksum_in_the_files_line_endings() -> None:
    data = b"x\r\n" + START.replace(b"\n", b"\r\n") + END.replace(b"\n", b"\r\n") + b"y"
    out = fill(data, parse(data, "s.md"), {"claims": "a\nb\n"})
    digest = checksum(b"a\nb\n").encode()
    assert out == (
        b"x\r\n<!-- memkeeper:generated source=claims -->\r\na\r\nb\r\n"
        b"<!-- memkeeper:end checksum=sha256:" + digest + b" -->\r\ny"
    )


def test_fill_keeps_an_end_marker_on_the_last_line_without_a_newline() -> None:
    data = START + b"<!-- memkeeper:end -->"
    out = fill(data, parse(data, "s.md"), {"claims": "t"})
    assert out.endswith(
        b"t\n<!-- memkeeper:end checksum=sha256:" + checksum(b"t\n").encode() + b" -->"
    )


def test_fill_leaves_regions_it_was_not_given_alone() -> None:
    data = START + b"keep\n" + END + b"<!-- memkeeper:generated source=events -->\n" + END
    out = fill(data, parse(data, "s.md"), {"events": "new\n"})
    assert out.startswith(START + b"keep\n" + END)
    assert b"new\n" in out


@pytest.mark.parametrize(
    ("data", "line", "needle"),
    [
        (START + START + END + END, 2, "nested in the region opened at line 1"),
        (b"text\n" + END, 2, "end marker without a start marker"),
        (b"a\n" + START + b"b\n", 2, "start marker without an end marker"),
        (START + END + START + END, 3, "duplicate region id 'claims' (also at line 1)"),
        (b"<!-- memkeeper:generated id=x -->\n" + END, 1, "without source=NAME"),
        (b"<!-- memkeeper:generated source=a b -->\n" + END, 1, "'b' is not KEY=VALUE"),
        (b"<!-- memkeeper:generated source=a source=b -->\n" + END, 1, "given twice"),
        (START + b"<!-- memkeeper:end checksum=md5:1 -->\n", 2, "bad end marker argument"),
        (START + b"<!-- memkeeper:end --> trailing\n", 2, "shares its line"),
        (b"<!-- memkeeper:generated source=../x -->\n" + END, 1, "bad source"),
    ],
)
def test_marker_mistakes_name_the_line(data: bytes, line: int, needle: str) -> None:
    with pytest.raises(Invalid) as caught:
        parse(data, "memory/status.md")
    assert caught.value.message.startswith(f"memory/status.md:{line}: ")
    assert needle in caught.value.message
    assert caught.value.fields["line"] == line


def test_a_start_marker_on_the_first_line_of_a_file_with_a_bom_counts() -> None:
    data = b"\xef\xbb\xbf" + START + END
    out = fill(data, parse(data, "s.md"), {"claims": "x\n"})
    assert out.startswith(b"\xef\xbb\xbf" + START + b"x\n<!-- memkeeper:end checksum=")


def test_two_regions_may_show_one_source_under_different_ids() -> None:
    data = START + END + b"<!-- memkeeper:generated source=claims id=again -->\n" + END
    assert [r.id for r in parse(data, "s.md")] == ["claims", "again"]


def test_markers_are_whole_lines_with_blanks_around_allowed() -> None:
    assert looks_like_marker(b"  <!--memkeeper:end-->  ")
    assert looks_like_marker(b"<!-- memkeeper:generated source=x --> and more")
    assert not looks_like_marker(b"see <!-- memkeeper:end --> inline")
    assert not looks_like_marker(b"<!-- memkeeper:ended -->")
    assert parse(b"see <!-- memkeeper:end --> inline\n", "s.md") == ()


def test_a_patch_outside_regions_is_fine_and_one_inside_is_not() -> None:
    old = b"# S\nnote\n" + START + b"gen\n" + END + b"tail\n"
    assert patch_problem("s.md", old, old.replace(b"note", b"new note")) is None
    assert patch_problem("s.md", old, b"# S\nmoved\n\n" + old[9:]) is None
    inside = patch_problem("s.md", old, old.replace(b"gen\n", b"mine\n"))
    assert inside is not None
    assert "generated region 'claims' (lines 3-5)" in inside
    gone = patch_problem("s.md", old, b"# S\nnote\ntail\n")
    assert gone is not None
    assert "'claims'" in gone
    added = patch_problem("s.md", old, old + b"<!-- memkeeper:generated source=events -->\n" + END)
    assert added is not None
    assert "add a generated region" in added
    broken = patch_problem("s.md", old, old + END)
    assert broken is not None
    assert "break the region markers" in broken


# -- properties ---------------------------------------------------------------------------------

PROPERTY = settings(max_examples=200, deadline=None)
rendered_text = st.text(
    alphabet=st.sampled_from([*"ab #|-*`<>!\n\r\t", "é", "日"]), max_size=40
).filter(lambda t: not any(looks_like_marker(line.encode()) for line in t.splitlines()))


@st.composite
def manual(draw: st.DrawFn) -> bytes:
    """Arbitrary Markdown (never a memkeeper region marker), ending with a line ending."""
    data = draw(documents())
    if not data.endswith((b"\n", b"\r")):
        data += draw(st.sampled_from([b"\n", b"\r\n"]))
    return data


@st.composite
def files_with_regions(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    pieces = [draw(manual()) for _ in range(3)]
    data = pieces[0] + START + draw(manual()) + END + pieces[1]
    data += b"<!-- memkeeper:generated source=events -->\n" + END + pieces[2]
    return data, pieces


@PROPERTY
@given(doc=files_with_regions(), claims=rendered_text, events=rendered_text)
def test_rendering_twice_is_rendering_once(
    doc: tuple[bytes, list[bytes]], claims: str, events: str
) -> None:
    data, _ = doc
    texts = {"claims": claims, "events": events}
    once = fill(data, parse(data, "s.md"), texts)
    twice = fill(once, parse(once, "s.md"), texts)
    assert twice == once
    assert not any(region.edited(once) for region in parse(once, "s.md"))


@PROPERTY
@given(doc=files_with_regions(), claims=rendered_text, events=rendered_text)
def test_text_outside_the_regions_is_kept_byte_for_byte(
    doc: tuple[bytes, list[bytes]], claims: str, events: str
) -> None:
    data, pieces = doc
    out = fill(data, parse(data, "s.md"), {"claims": claims, "events": events})
    first, second = parse(out, "s.md")
    assert out[: first.start] == pieces[0]
    assert out[first.end : second.start] == pieces[1]
    assert out[second.end :] == pieces[2]
    assert out[first.start : first.text_start] == START


@PROPERTY
@given(doc=files_with_regions(), edit=st.text(alphabet="xyz", min_size=1, max_size=5))
def test_any_edit_inside_a_rendered_region_is_caught(
    doc: tuple[bytes, list[bytes]], edit: str
) -> None:
    data, _ = doc
    out = fill(data, parse(data, "s.md"), {"claims": "rendered\n", "events": "e\n"})
    region = parse(out, "s.md")[0]
    at = region.text_start + len(b"rendered")
    edited = out[:at] + edit.encode() + out[at:]
    assert parse(edited, "s.md")[0].edited(edited)


def marker_lines(tokens: list[str]) -> bytes:
    """Start (each with its own id), end and text lines."""
    lines = {"E": END, "T": b"text\n"}
    return b"".join(
        lines.get(t, b"<!-- memkeeper:generated source=claims id=r%d -->\n" % n)
        for n, t in enumerate(tokens)
    )


def model_error_line(tokens: list[str]) -> int | None:
    """The line a correct parser blames for a sequence of start/end/text lines, if any."""
    opened: int | None = None
    for line, token in enumerate(tokens, start=1):
        if token == "S":
            if opened is not None:
                return line
            opened = line
        elif token == "E":
            if opened is None:
                return line
            opened = None
    return opened


@settings(max_examples=500, deadline=None)
@given(tokens=st.lists(st.sampled_from("SET"), max_size=10))
def test_the_parser_blames_the_first_bad_marker(tokens: list[str]) -> None:
    data = marker_lines(tokens)
    expected = model_error_line(tokens)
    if expected is None:
        assert len(parse(data, "s.md")) == tokens.count("S")
        return
    with pytest.raises(Invalid) as caught:
        parse(data, "s.md")
    assert caught.value.fields["line"] == expected
