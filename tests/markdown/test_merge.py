"""Section-level three-way merges: what a save that raced memkeeper's replace becomes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.markdown.merge import merge_sections

BASE = b"# Project\n\nintro\n\n## Build\n\nmake\n\n## Testing\n\npytest\n\n## Notes\n\nnone\n"


def edit(data: bytes, old: bytes, new: bytes) -> bytes:
    assert old in data
    return data.replace(old, new, 1)


def test_edits_of_different_sections_both_land() -> None:
    theirs = edit(BASE, b"pytest\n", b"pytest -q\n")
    ours = edit(BASE, b"make\n", b"make all\n")
    done = merge_sections(BASE, theirs, ours, "CLAUDE.md")
    assert done.data == edit(theirs, b"make\n", b"make all\n")
    assert done.conflicts == ()
    assert done.theirs == ("project/testing",)
    assert done.ours == ("project/build",)


def test_edits_of_the_same_section_conflict_and_merge_nothing() -> None:
    theirs = edit(BASE, b"make\n", b"make -j\n")
    ours = edit(BASE, b"make\n", b"make all\n")
    done = merge_sections(BASE, theirs, ours, "CLAUDE.md")
    assert done.data is None
    assert done.conflicts == ("project/build",)


def test_with_ours_wins_a_section_both_changed_is_ours_and_the_rest_still_merges() -> None:
    theirs = edit(edit(BASE, b"make\n", b"make -j\n"), b"pytest\n", b"pytest -q\n")
    ours = edit(BASE, b"make\n", b"make all\n")
    done = merge_sections(BASE, theirs, ours, "CLAUDE.md", ours_wins=True)
    assert done.data == edit(theirs, b"make -j\n", b"make all\n")
    assert done.conflicts == ("project/build",)


def test_the_same_edit_on_both_sides_is_no_conflict() -> None:
    both = edit(BASE, b"make\n", b"make all\n")
    assert merge_sections(BASE, both, both, "CLAUDE.md").data == both


def test_a_section_deleted_on_one_side_and_edited_on_the_other_conflicts() -> None:
    theirs = edit(BASE, b"## Notes\n\nnone\n", b"")
    ours = edit(BASE, b"none\n", b"some\n")
    assert merge_sections(BASE, theirs, ours, "CLAUDE.md").conflicts == ("project/notes",)


def test_a_deletion_on_one_side_of_an_untouched_section_lands() -> None:
    theirs = edit(BASE, b"## Notes\n\nnone\n", b"")
    ours = edit(BASE, b"make\n", b"make all\n")
    done = merge_sections(BASE, theirs, ours, "CLAUDE.md")
    assert done.data == edit(theirs, b"make\n", b"make all\n")


def test_sections_each_side_added_keep_their_place() -> None:
    theirs = edit(BASE, b"## Testing\n", b"## Lint\n\nruff\n\n## Testing\n")
    ours = BASE + b"\n## 2026-12-01 entry\n\nappended\n"
    done = merge_sections(BASE, theirs, ours, "CLAUDE.md")
    assert done.data == theirs + b"\n## 2026-12-01 entry\n\nappended\n"


def test_the_rest_of_a_half_written_save_is_merged_after_the_cut() -> None:
    """memkeeper read the save half written, patched an earlier section and replaced the
    file; the writer's second half went to the replaced file."""
    half = BASE[: BASE.index(b"## Testing") + len(b"## Testing\n\npy")]
    full = edit(BASE, b"pytest\n", b"pytest -q\n")
    ours = edit(half, b"make\n", b"make all\n")
    done = merge_sections(half, full, ours, "CLAUDE.md")
    assert done.data == edit(full, b"make\n", b"make all\n")


def test_a_missing_final_newline_does_not_glue_a_heading_to_the_line_before() -> None:
    base = b"# A\n\na\n\n# C\n\nc\n"
    theirs = b"# A\n\na\n\n# C\n\nchanged"
    ours = base + b"# D\n\nd\n"
    merged = merge_sections(base, theirs, ours, "x.md").data
    assert merged == b"# A\n\na\n\n# C\n\nchanged\n# D\n\nd\n"


def test_a_merge_that_would_swallow_a_heading_is_a_conflict() -> None:
    theirs = edit(BASE, b"pytest\n", b"```\npytest\n")  # an unclosed fence from here on
    ours = edit(BASE, b"none\n", b"some\n")
    done = merge_sections(BASE, theirs, ours, "CLAUDE.md")
    assert done.data is None


def test_crlf_files_stay_crlf() -> None:
    base = BASE.replace(b"\n", b"\r\n")
    theirs = edit(base, b"pytest\r\n", b"pytest -q\r\n")
    ours = edit(base, b"make\r\n", b"make all\r\n")
    merged = merge_sections(base, theirs, ours, "CLAUDE.md").data
    assert merged is not None
    assert b"\n" not in merged.replace(b"\r\n", b"")


# -- properties --------------------------------------------------------------------------------

SECTIONS = ("intro", "make", "pytest", "none")
bodies = st.text(st.sampled_from("abc xyz\n"), max_size=12).map(  # never a heading
    lambda s: s.strip("\n").replace("\n\n", "\n")
)


def document(texts: tuple[str, ...]) -> bytes:
    headings = ("# Project", "## Build", "## Testing", "## Notes")
    return "".join(f"{h}\n\n{t}\n\n" for h, t in zip(headings, texts, strict=True)).encode()


edits = st.lists(st.tuples(st.integers(0, 3), bodies), max_size=3)


def applied(changes: list[tuple[int, str]]) -> tuple[str, ...]:
    texts = list(SECTIONS)
    for index, text in changes:
        texts[index] = text
    return tuple(texts)


@given(edits)
def test_a_merge_with_one_side_unchanged_is_the_other_side(changes: list[tuple[int, str]]) -> None:
    base, other = document(SECTIONS), document(applied(changes))
    assert merge_sections(base, base, other, "x.md").data == other
    assert merge_sections(base, other, base, "x.md").data == other


@given(edits, edits)
def test_edits_of_disjoint_sections_commute(
    mine: list[tuple[int, str]], yours: list[tuple[int, str]]
) -> None:
    yours = [(i, t) for i, t in yours if i not in {j for j, _ in mine}]
    base = document(SECTIONS)
    a, b = document(applied(mine)), document(applied(yours))
    merged = merge_sections(base, a, b, "x.md").data
    assert merged == merge_sections(base, b, a, "x.md").data
    assert merged == document(applied(mine + yours))
