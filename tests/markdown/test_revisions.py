"""Revision bookkeeping: which sections changed and what rev each row carries after a re-parse.

``reindex`` returns only the rows that differ from the index's; ``stored`` applies them as
the store does (a row left out stays as it was), so the tests read the index that results."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.events import digest
from memkeeper.markdown.resplit import Resplit
from memkeeper.markdown.revisions import Reindex, compare, indexed, reindex, rows_for
from memkeeper.markdown.sections import split
from tests.markdown.test_resplit import edits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.records import SectionRow


def revs(result: Reindex | Sequence[SectionRow]) -> dict[str, int]:
    rows = result.rows if isinstance(result, Reindex) else result
    return {row.key: row.rev for row in rows}


def stored(previous: Sequence[SectionRow], result: Reindex) -> list[SectionRow]:
    """The index after ``result``'s rows are put over ``previous``: present rows in order,
    then absent ones (as ``FileStore.sections(with_absent=True)`` answers)."""
    rows = {row.key: row for row in previous} | {row.key: row for row in result.rows}
    return sorted(rows.values(), key=lambda row: (not row.present, row.ord))


def step(previous: Sequence[SectionRow], data: bytes) -> tuple[Reindex, list[SectionRow]]:
    result = reindex(list(previous), data)
    return result, stored(previous, result)


def by_key(rows: Sequence[SectionRow]) -> dict[str, SectionRow]:
    return {row.key: row for row in rows}


START = b"intro\n# A\none\n## B\ntwo\n# C\nthree\n"


def test_rows_for_lists_every_section_in_order_at_rev_one() -> None:
    rows = rows_for(split(START))
    assert [(row.key, row.ord, row.rev, row.present) for row in rows] == [
        ("_preamble", 0, 1, True),
        ("a", 1, 1, True),
        ("a/b", 2, 1, True),
        ("c", 3, 1, True),
    ]


def test_a_row_holds_the_sections_heading_body_hash_and_line_count() -> None:
    row = by_key(rows_for(split(b"# Top\nSetext\n------\nline 1\r\nline 2\n")))["top/setext"]
    assert (row.heading, row.body) == (b"Setext\n------\n", b"line 1\r\nline 2\n")
    assert row.hash == digest(row.heading + row.body)
    assert (row.title, row.level, row.base, row.lines) == ("Setext", 2, "setext", 4)


def test_the_preamble_row_has_no_heading() -> None:
    (row, *_) = rows_for(split(START))
    assert (row.heading, row.body, row.level) == (b"", b"intro\n", 0)


def test_a_first_index_reports_every_key_as_changed() -> None:
    result = reindex([], START)
    assert result.changed == ("_preamble", "a", "a/b", "c")
    assert list(result.rows) == rows_for(split(START))


def test_reindexing_unchanged_bytes_changes_nothing() -> None:
    first = list(reindex([], START).rows)
    again = reindex(first, START)
    assert again.changed == ()
    assert again.rows == ()


def test_an_edited_section_goes_up_one_rev_and_only_its_row_is_written() -> None:
    first = list(reindex([], START).rows)
    edited, index = step(first, START.replace(b"two", b"TWO"))
    assert edited.changed == ("a/b",)
    assert [row.key for row in edited.rows] == ["a/b"]
    assert revs(index) == {"_preamble": 1, "a": 1, "a/b": 2, "c": 1}
    assert by_key(index)["a/b"].body == b"TWO\n"


def test_one_section_of_many_edited_writes_one_row() -> None:
    data = b"".join(b"## Note %d\n\nfact %d\n\n" % (n, n) for n in range(1000))
    first = list(reindex([], data).rows)
    edited = reindex(first, data.replace(b"fact 500\n", b"```\nfenced\n```\n"))
    assert [row.key for row in edited.rows] == ["note-500"]
    assert edited.rows[0].rev == 2


def test_revs_keep_counting_over_many_edits() -> None:
    rows = list(reindex([], b"# A\nv0\n").rows)
    for n in range(1, 6):
        rows = step(rows, f"# A\nv{n}\n".encode())[1]
    assert revs(rows) == {"a": 6}


def test_a_heading_edit_changes_the_section_even_with_the_same_body() -> None:
    first = list(reindex([], b"# A\nbody\n").rows)
    edited = reindex(first, b"# A #\nbody\n")
    assert edited.changed == ("a",)
    assert revs(edited) == {"a": 2}


def test_a_moved_section_keeps_its_rev_and_takes_its_new_place() -> None:
    first = list(reindex([], b"# A\none\n# B\ntwo\n").rows)
    moved, index = step(first, b"# B\ntwo\n# A\none\n")
    assert moved.changed == ()
    assert [(row.key, row.ord, row.rev) for row in index] == [("b", 0, 1), ("a", 1, 1)]


def test_a_section_added_moves_the_ones_after_it() -> None:
    first = list(reindex([], b"# A\none\n# B\ntwo\n# C\n").rows)
    added, index = step(first, b"# A\none\n# N\n# B\ntwo\n# C\n")
    assert added.changed == ("n",)
    assert [(row.key, row.ord, row.rev) for row in index] == [
        ("a", 0, 1), ("n", 1, 1), ("b", 2, 1), ("c", 3, 1)
    ]  # fmt: skip


def test_a_vanished_section_is_kept_absent_with_its_rev_and_no_hash() -> None:
    first = list(reindex([], START).rows)
    edited, index = step(first, b"intro\n# A\none\n# C\nthree\n")
    assert edited.changed == ("a/b",)
    gone = by_key(index)["a/b"]
    assert (gone.present, gone.hash, gone.rev) == (False, None, 1)
    assert gone.body == b"two\n"  # the last bytes it had, for the record
    assert [row.key for row in index][-1] == "a/b"  # absent rows follow present ones


def test_a_section_already_absent_is_neither_rewritten_nor_reported() -> None:
    first = list(reindex([], b"# A\n# B\n").rows)
    without_b = step(first, b"# A\n")[1]
    still = reindex(without_b, b"# A\n")
    assert still.changed == ()
    assert still.rows == ()


def test_a_returning_section_continues_its_count() -> None:
    rows = list(reindex([], b"# A\n# B\nb\n").rows)
    rows = step(rows, b"# A\n# B\nb2\n")[1]  # b at rev 2
    rows = step(rows, b"# A\n")[1]
    back, index = step(rows, b"# A\n# B\nb2\n")
    assert back.changed == ("b",)
    assert revs(index) == {"a": 1, "b": 3}
    assert by_key(index)["b"].present


def test_a_renamed_heading_is_a_new_key_and_the_old_one_disappears() -> None:
    first = list(reindex([], b"# Old\nx\n").rows)
    renamed, index = step(first, b"# New\nx\n")
    assert renamed.changed == ("new", "old")
    assert revs(index) == {"new": 1, "old": 1}
    assert not by_key(index)["old"].present


def test_the_index_read_back_is_the_split_it_came_from() -> None:
    data = b"\xef\xbb\xbfintro\r\n<!-- memkeeper:section id=s -->\n# A\n\nx\rT\n---\n"
    assert indexed(rows_for(split(data))) == split(data)


# --- properties ------------------------------------------------------------------------------

TITLES = ("Alpha", "Beta", "Gamma")
BODIES = ("", "x\n", "y\n", "x\ny\n")
versions = st.lists(
    st.lists(st.tuples(st.sampled_from(TITLES), st.sampled_from(BODIES)), max_size=3),
    min_size=1,
    max_size=8,
)


def document_of(sections: list[tuple[str, str]]) -> bytes:
    return "".join(f"# {title}\n{body}" for title, body in sections).encode()


@given(versions)
def test_reindexing_a_fresh_parse_of_the_same_bytes_is_a_no_op(
    history: list[list[tuple[str, str]]],
) -> None:
    data = document_of(history[0])
    assert reindex(rows_for(split(data)), data) == Reindex((), (), split(data))


@settings(max_examples=200)
@given(versions)
def test_a_rev_never_goes_back_and_rises_by_one_exactly_when_the_bytes_change(
    history: list[list[tuple[str, str]]],
) -> None:
    index: list[SectionRow] = []
    for sections in history:
        data = document_of(sections)
        result, after = step(index, data)
        now = by_key(after)
        for key, old in by_key(index).items():
            new = now[key]
            assert new.rev >= old.rev
            bytes_changed = (new.present, new.hash) != (old.present, old.hash)
            assert (key in result.changed) is bytes_changed
            assert new.rev == old.rev + (1 if bytes_changed and new.present else 0)
        for key, row in now.items():
            assert (row.hash is None) is (not row.present)
            if row.present:
                assert row.hash == digest(row.heading + row.body)
            if key not in by_key(index):
                assert row.rev == 1
                assert key in result.changed
        present = [row for row in after if row.present]
        assert [(r.key, r.ord) for r in present] == [
            (s.key, n) for n, s in enumerate(split(data).sections)
        ]
        index = after


@settings(max_examples=300, deadline=None)
@given(edits())
def test_the_window_writes_what_a_whole_comparison_writes(edit: tuple[bytes, bytes]) -> None:
    """Differential: the index after ``reindex`` (only the sections around the change) is
    the index a comparison of every section with a whole parse gives."""
    old, new = edit
    if b"\x00" in new:
        return
    first = list(reindex([], old).rows)
    doc = split(new)
    whole = compare(first, Resplit(doc, 0, len(first), len(doc.sections)))
    assert stored(first, reindex(first, new)) == stored(first, whole)
