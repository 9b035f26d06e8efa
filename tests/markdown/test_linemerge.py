"""The rules around git's line merge: marker sizes, final line endings, resolving conflicts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.markdown.linemerge import marker_size, resolve, terminated


def test_markers_are_longer_than_any_marker_run_in_the_texts() -> None:
    assert marker_size(b"plain\n") == 7
    assert marker_size(b"<<<<<<<<<< x\n", b"====\n") == 11
    assert marker_size(b"a\n", b"|||||||||\n") == 10


@given(st.lists(st.sampled_from([b"<", b"=", b">", b"|", b"a", b"\n", b" "]), max_size=40))
def test_no_line_of_a_text_starts_with_a_marker(parts: list[bytes]) -> None:
    text = b"".join(parts)
    size = marker_size(text)
    for line in text.splitlines():
        for char in b"<|=>":
            assert not line.startswith(bytes([char]) * size)


def test_a_final_line_ending_is_added_only_when_none_of_the_three_has_one() -> None:
    assert terminated(b"a", b"a\nb", b"a\nc") == (b"a\n", b"a\nb\n", b"a\nc\n", b"\n")
    assert terminated(b"a\r\nb", b"a\r\nb\r\nc", b"a\r\nb") == (
        b"a\r\nb\r\n",
        b"a\r\nb\r\nc\r\n",
        b"a\r\nb\r\n",
        b"\r\n",
    )
    assert terminated(b"a\n", b"a\nb", b"a") == (b"a\n", b"a\nb", b"a", b"")
    assert terminated(b"", b"x", b"y") == (b"", b"x", b"y", b"")


def conflict(theirs: bytes, base: bytes, mine: bytes, size: int = 7) -> bytes:
    start, middle, split, end = (bytes([c]) * size for c in b"<|=>")
    return (
        start + b" theirs\n" + theirs + middle + b" base\n" + base + split + b"\n" + mine
        + end + b" mine\n"
    )  # fmt: skip


def test_insertions_on_both_sides_resolve_theirs_first() -> None:
    merged = b"a\n" + conflict(b"t\n", b"", b"m\n") + b"z\n"
    assert resolve(merged, 7) == b"a\nt\nm\nz\n"


def test_any_conflict_with_a_base_does_not_resolve() -> None:
    assert resolve(b"a\n" + conflict(b"t\n", b"b\n", b"m\n"), 7) is None


def test_marker_lines_of_another_size_are_text() -> None:
    text = b"<<<<<<< theirs\n=======\n>>>>>>> mine\n"
    assert resolve(text, 9) == text
    assert resolve(text + conflict(b"t\n", b"", b"m\n", 9), 9) == text + b"t\nm\n"


def test_an_unfinished_conflict_does_not_resolve() -> None:
    assert resolve(b"<<<<<<< theirs\nt\n", 7) is None


def test_crlf_markers_are_markers() -> None:
    merged = conflict(b"t\r\n", b"", b"m\r\n").replace(b" theirs\n", b" theirs\r\n")
    assert resolve(merged, 7) == b"t\r\nm\r\n"


def test_insertions_on_both_sides_merge_without_git() -> None:
    from memkeeper.markdown.linemerge import insertions

    base = b"- one\n- two\n"
    assert insertions(base, base + b"- t\n", base + b"- m\n") == base + b"- t\n- m\n"
    assert insertions(base, b"- zero\n" + base, base + b"- m\n") == b"- zero\n" + base + b"- m\n"
    assert insertions(base, base + b"- same\n", base + b"- same\n") == base + b"- same\n"


def test_an_insertion_that_could_slide_or_a_change_is_left_to_git() -> None:
    from memkeeper.markdown.linemerge import insertions

    base = b"a\n\nb\n"
    assert insertions(base, b"a\n\nx\n\nb\n", base + b"m\n") is None  # "x\n\n" or "\nx\n"?
    assert insertions(base, b"A\n\nb\n", base + b"m\n") is None  # a change, not an insertion
    assert insertions(b"a\nb", b"a\nb\nc", b"a\nb\nd") is None  # no final line ending
