"""Lines of bytes: where each starts, how many there are, and which line ending a file uses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.markdown import sections
from memkeeper.markdown.lines import count_lines, detect_newline, line_starts

ENDINGS = (b"\n", b"\r\n", b"\r")
# Bytes with every line ending plus characters str.splitlines() would wrongly split on.
blobs = st.lists(
    st.sampled_from([b"a", b" ", b"\n", b"\r", b"\r\n", b"\x0b", b"\x0c", b"\x1c", b"\x85"]),
    max_size=20,
).map(b"".join)
plain_lines = st.lists(
    st.text(alphabet="ab #-\t", min_size=1, max_size=5).map(str.encode), min_size=1, max_size=8
)


@pytest.mark.parametrize(
    ("data", "starts"),
    [
        (b"", []),
        (b"a", [0]),
        (b"a\n", [0]),
        (b"a\nb", [0, 2]),
        (b"a\r\nb\r\n", [0, 3]),
        (b"a\rb\n\nc", [0, 2, 4, 5]),
        (b"\r\n\r\n", [0, 2]),
        (b"a\x0bb\x0cc", [0]),
    ],
)
def test_line_starts_and_count_lines(data: bytes, starts: list[int]) -> None:
    assert line_starts(data) == starts
    assert count_lines(data) == len(starts)


@pytest.mark.parametrize(
    ("data", "newline"),
    [
        (b"", b"\n"),
        (b"one line", b"\n"),
        (b"a\r\nb\r\n", b"\r\n"),
        (b"a\rb\r", b"\r"),
        (b"a\r\nb\nc\n", b"\n"),
        (b"a\r\nb\n", b"\r\n"),
        (b"a\nb\r\n", b"\n"),
    ],
)
def test_detect_newline_picks_the_most_common_ending_then_the_first(
    data: bytes, newline: bytes
) -> None:
    assert detect_newline(data) == newline


@pytest.mark.parametrize(
    "separator",
    ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"],
)
def test_characters_other_than_cr_and_lf_never_end_a_line(separator: str) -> None:
    data = f"one{separator}two\n".encode()
    assert line_starts(data) == [0]
    assert count_lines(data) == 1
    assert len(data.decode().splitlines()) == 2  # what str.splitlines() would wrongly say


def test_a_last_line_without_an_ending_still_counts() -> None:
    assert count_lines(b"a\nb") == 2
    assert count_lines(b"a\nb\n") == 2
    assert count_lines(b"a\nb\r") == 2


def test_a_cr_then_lf_is_one_ending_but_lf_then_cr_is_two() -> None:
    assert line_starts(b"a\r\nb") == [0, 3]
    assert line_starts(b"a\n\rb") == [0, 2, 3]
    assert count_lines(b"\n\r") == 2
    assert count_lines(b"\r\n") == 1


def test_blank_lines_each_count() -> None:
    assert line_starts(b"\n\n\n") == [0, 1, 2]
    assert count_lines(b"\r\r\r") == 3


@given(blobs)
def test_count_lines_agrees_with_line_starts(data: bytes) -> None:
    assert count_lines(data) == len(line_starts(data))


@given(blobs)
def test_lines_are_what_bytes_splitlines_finds(data: bytes) -> None:
    # bytes.splitlines() (unlike str.splitlines()) ends lines only at \r\n, \r and \n.
    pieces = data.splitlines(keepends=True)
    offsets = [sum(len(p) for p in pieces[:n]) for n in range(len(pieces))]
    assert line_starts(data) == offsets
    assert count_lines(data) == len(pieces)


@given(plain_lines, st.sampled_from(ENDINGS), st.booleans())
def test_joining_lines_with_one_ending_counts_them_back(
    lines: list[bytes], newline: bytes, final: bool
) -> None:
    data = newline.join(lines) + (newline if final else b"")
    assert count_lines(data) == len(lines)
    lengths = [len(line) + len(newline) for line in lines]
    assert line_starts(data) == [sum(lengths[:k]) for k in range(len(lines))]


@given(st.lists(st.text(alphabet="ab #", max_size=4), min_size=1, max_size=6))
def test_a_file_with_one_kind_of_ending_is_detected_as_that_kind(lines: list[str]) -> None:
    for newline in ENDINGS:
        data = b"".join(line.encode() + newline for line in lines)
        assert detect_newline(data) == newline


@given(blobs)
def test_detect_newline_picks_an_ending_that_is_at_least_as_common_as_any_other(
    data: bytes,
) -> None:
    crlf = data.count(b"\r\n")
    counts = {b"\r\n": crlf, b"\r": data.count(b"\r") - crlf, b"\n": data.count(b"\n") - crlf}
    chosen = detect_newline(data)
    assert chosen in ENDINGS
    if any(counts.values()):
        assert counts[chosen] == max(counts.values())
    else:
        assert chosen == b"\n"


def test_a_tie_goes_to_the_ending_seen_first() -> None:
    assert detect_newline(b"a\rb\nc\r\nd") == b"\r"
    assert detect_newline(b"a\r\nb\rc\n") == b"\r\n"


def test_sections_re_exports_the_same_functions() -> None:
    assert sections.line_starts is line_starts
    assert sections.count_lines is count_lines
    assert sections.detect_newline is detect_newline
