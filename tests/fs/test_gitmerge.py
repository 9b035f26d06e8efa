"""``git merge-file`` on three section bodies, with memkeeper's rules around it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.fs.gitmerge import merge

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.peer("git"),
]

BASE = b"- one\n- two\n- three\n- four\n- five\n"


def test_changes_to_lines_apart_both_land(tmp_path: Path) -> None:
    theirs = BASE.replace(b"- one\n", b"- ONE\n")
    mine = BASE.replace(b"- five\n", b"- FIVE\n")
    assert merge(BASE, theirs, mine, str(tmp_path)) == (
        "merged",
        b"- ONE\n- two\n- three\n- four\n- FIVE\n",
    )


def test_insertions_at_the_same_place_both_land_theirs_first(tmp_path: Path) -> None:
    theirs, mine = BASE + b"- theirs\n", BASE + b"- mine\n"
    assert merge(BASE, theirs, mine, str(tmp_path)) == ("merged", BASE + b"- theirs\n- mine\n")


def test_two_changes_of_one_line_conflict(tmp_path: Path) -> None:
    theirs = BASE.replace(b"- two\n", b"- 2\n")
    mine = BASE.replace(b"- two\n", b"- II\n")
    assert merge(BASE, theirs, mine, str(tmp_path)) == ("conflict", b"")


def test_changes_to_neighbouring_lines_conflict_as_in_git(tmp_path: Path) -> None:
    theirs = BASE.replace(b"- two\n", b"- 2\n")
    mine = BASE.replace(b"- three\n", b"- 3\n")
    assert merge(BASE, theirs, mine, str(tmp_path)) == ("conflict", b"")


def test_an_insertion_next_to_a_change_conflicts(tmp_path: Path) -> None:
    theirs = BASE.replace(b"- five\n", b"- 5\n")
    mine = BASE + b"- six\n"
    assert merge(BASE, theirs, mine, str(tmp_path)) == ("conflict", b"")


def test_appends_to_a_body_without_a_final_newline_both_land(tmp_path: Path) -> None:
    base = b"- one\n- two"
    theirs, mine = base + b"\n- theirs", base + b"\n- mine"
    assert merge(base, theirs, mine, str(tmp_path)) == ("merged", base + b"\n- theirs\n- mine")


def test_crlf_bodies_merge_in_their_own_line_endings(tmp_path: Path) -> None:
    base = BASE.replace(b"\n", b"\r\n")
    theirs = base.replace(b"- one\r\n", b"- ONE\r\n")
    mine = base + b"- six\r\n"
    assert merge(base, theirs, mine, str(tmp_path)) == ("merged", theirs + b"- six\r\n")


def test_text_that_looks_like_conflict_markers_is_text(tmp_path: Path) -> None:
    base = b"<<<<<<< theirs\n=======\n>>>>>>> mine\n|||||||| base\n"
    theirs, mine = base + b"- theirs\n", base + b"- mine\n"
    assert merge(base, theirs, mine, str(tmp_path)) == ("merged", base + b"- theirs\n- mine\n")
    clash = merge(base, b"=======\n" + base, b"<<<<<<<<<<\n" + base, str(tmp_path))
    assert clash == ("merged", b"=======\n<<<<<<<<<<\n" + base)


def test_no_git_is_unavailable_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    theirs = BASE.replace(b"- one\n", b"- ONE\n")  # a change, not only insertions: git's
    mine = BASE.replace(b"- five\n", b"- FIVE\n")  # to merge
    assert merge(BASE, theirs, mine, str(tmp_path)) == ("unavailable", b"")


def test_the_temporary_files_are_gone_afterwards(tmp_path: Path) -> None:
    merge(BASE, BASE + b"- theirs\n", BASE + b"- mine\n", str(tmp_path))
    assert list(tmp_path.iterdir()) == []


# -- properties ---------------------------------------------------------------------------

lines = st.lists(
    st.sampled_from([b"- a", b"- b", b"text", b"", b"```", b"<<<<<<<", b"=======", b"# h"]),
    min_size=0,
    max_size=8,
)
texts = lines.map(lambda ls: b"".join(line + b"\n" for line in ls))


@settings(max_examples=60, deadline=None)
@given(base=texts, other=texts)
def test_a_merge_with_one_side_unchanged_is_the_other_side(
    tmp_path_factory: pytest.TempPathFactory, base: bytes, other: bytes
) -> None:
    where = str(tmp_path_factory.mktemp("m"))
    assert merge(base, base, other, where) == ("merged", other)
    assert merge(base, other, base, where) == ("merged", other)


@st.composite
def disjoint_edits(draw: st.DrawFn) -> tuple[bytes, bytes, bytes, bytes]:
    """A base, two edits of it that change line ranges with an unchanged line between them,
    and the text with both edits made."""
    base = [f"- line {n}".encode() for n in range(draw(st.integers(3, 12)))]
    cut = draw(st.integers(1, len(base) - 2))  # base[cut] stays as it is on both sides
    first = draw(st.lists(st.sampled_from([b"- x", b"- y", b""]), max_size=3))
    second = draw(st.lists(st.sampled_from([b"- p", b"- q", b""]), max_size=3))
    a_start = draw(st.integers(0, cut - 1))
    a_end = draw(st.integers(a_start + 1, cut))  # replaces at least one line before the cut
    b_start = draw(st.integers(cut + 1, len(base)))
    b_end = draw(st.integers(b_start, len(base)))
    if b_start == b_end and not second:
        second = [b"- p"]  # an insertion of nothing is no edit
    one = base[:a_start] + first + base[a_end:]
    two = base[:b_start] + second + base[b_end:]
    both = base[:a_start] + first + base[a_end:b_start] + second + base[b_end:]
    return tuple(b"".join(line + b"\n" for line in side) for side in (base, one, two, both))  # type: ignore[return-value]


@settings(max_examples=80, deadline=None)
@given(edits=disjoint_edits())
def test_disjoint_edits_commute_and_both_land(
    tmp_path_factory: pytest.TempPathFactory, edits: tuple[bytes, bytes, bytes, bytes]
) -> None:
    base, one, two, both = edits
    where = str(tmp_path_factory.mktemp("m"))
    assert merge(base, one, two, where) == ("merged", both)
    assert merge(base, two, one, where) == ("merged", both)


LINES = st.sampled_from([b"a\n", b"b\n", b"\n", b"- x\n", b"c\r\n"])


@st.composite
def insertions(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """A base of few distinct lines (repeats are likely) and two sides that each insert a
    run of lines at one place."""
    base = draw(st.lists(LINES, min_size=1, max_size=8))
    sides = []
    for _ in range(2):
        at = draw(st.integers(0, len(base)))
        added = draw(
            st.lists(LINES | st.sampled_from([b"new\n", b"mine\n"]), min_size=1, max_size=3)
        )
        sides.append(b"".join(base[:at] + added + base[at:]))
    return b"".join(base), sides[0], sides[1]


@settings(max_examples=300, deadline=None)
@given(texts=insertions())
def test_the_quick_merge_of_insertions_is_what_git_gives(
    texts: tuple[bytes, bytes, bytes], tmp_path_factory: pytest.TempPathFactory
) -> None:
    base, theirs, mine = texts
    where = str(tmp_path_factory.mktemp("quick"))
    quick = merge(base, theirs, mine, where)
    slow = merge(base, theirs, mine, where, quick=False)
    assert quick == slow


def test_the_quick_merge_answers_the_agents_common_case_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("git was run"))
    base = b"\n- one\n- two\n\n"
    theirs = b"\n- one\n- two\n- theirs\n\n"
    mine = b"\n- one\n- two\n- mine\n\n"
    assert merge(base, theirs, mine, str(tmp_path)) == (
        "merged",
        b"\n- one\n- two\n- theirs\n- mine\n\n",
    )
