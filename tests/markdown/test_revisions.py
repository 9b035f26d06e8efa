"""Revision bookkeeping: which sections changed and what rev each row carries after a re-parse."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.events import digest
from memkeeper.markdown.revisions import Reindex, reindex, rows_for
from memkeeper.markdown.sections import split

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.records import SectionRow


def revs(result: Reindex | Sequence[SectionRow]) -> dict[str, int]:
    rows = result.rows if isinstance(result, Reindex) else result
    return {row.key: row.rev for row in rows}


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
    result = reindex([], split(START))
    assert result.changed == ("_preamble", "a", "a/b", "c")
    assert list(result.rows) == rows_for(split(START))


def test_reindexing_unchanged_bytes_changes_nothing() -> None:
    first = reindex([], split(START))
    again = reindex(list(first.rows), split(START))
    assert again.changed == ()
    assert again.rows == first.rows


def test_an_edited_section_goes_up_one_rev_and_its_neighbours_keep_theirs() -> None:
    first = reindex([], split(START))
    edited = reindex(list(first.rows), split(START.replace(b"two", b"TWO")))
    assert edited.changed == ("a/b",)
    assert revs(edited) == {"_preamble": 1, "a": 1, "a/b": 2, "c": 1}
    assert by_key(edited.rows)["a/b"].body == b"TWO\n"


def test_revs_keep_counting_over_many_edits() -> None:
    rows = list(reindex([], split(b"# A\nv0\n")).rows)
    for n in range(1, 6):
        rows = list(reindex(rows, split(f"# A\nv{n}\n".encode())).rows)
    assert revs(rows) == {"a": 6}


def test_a_heading_edit_changes_the_section_even_with_the_same_body() -> None:
    first = reindex([], split(b"# A\nbody\n"))
    edited = reindex(list(first.rows), split(b"# A #\nbody\n"))
    assert edited.changed == ("a",)
    assert revs(edited) == {"a": 2}


def test_a_moved_section_keeps_its_rev_and_takes_its_new_place() -> None:
    first = reindex([], split(b"# A\none\n# B\ntwo\n"))
    moved = reindex(list(first.rows), split(b"# B\ntwo\n# A\none\n"))
    assert moved.changed == ()
    assert [(row.key, row.ord, row.rev) for row in moved.rows] == [("b", 0, 1), ("a", 1, 1)]


def test_a_vanished_section_is_kept_absent_with_its_rev_and_no_hash() -> None:
    first = reindex([], split(START))
    edited = reindex(list(first.rows), split(b"intro\n# A\none\n# C\nthree\n"))
    assert edited.changed == ("a/b",)
    gone = by_key(edited.rows)["a/b"]
    assert (gone.present, gone.hash, gone.rev) == (False, None, 1)
    assert gone.body == b"two\n"  # the last bytes it had, for the record
    assert [row.key for row in edited.rows][-1] == "a/b"  # absent rows follow present ones


def test_a_section_already_absent_is_neither_rewritten_nor_reported() -> None:
    first = reindex([], split(b"# A\n# B\n"))
    without_b = reindex(list(first.rows), split(b"# A\n"))
    still = reindex(list(without_b.rows), split(b"# A\n"))
    assert still.changed == ()
    assert [row.key for row in still.rows] == ["a"]


def test_a_returning_section_continues_its_count() -> None:
    rows = list(reindex([], split(b"# A\n# B\nb\n")).rows)
    rows = list(reindex(rows, split(b"# A\n# B\nb2\n")).rows)  # b at rev 2
    gone = reindex(rows, split(b"# A\n"))
    back = reindex([*gone.rows], split(b"# A\n# B\nb2\n"))
    assert back.changed == ("b",)
    assert revs(back) == {"a": 1, "b": 3}
    assert by_key(back.rows)["b"].present


def test_a_renamed_heading_is_a_new_key_and_the_old_one_disappears() -> None:
    first = reindex([], split(b"# Old\nx\n"))
    renamed = reindex(list(first.rows), split(b"# New\nx\n"))
    assert renamed.changed == ("new", "old")
    assert revs(renamed) == {"new": 1, "old": 1}
    assert not by_key(renamed.rows)["old"].present


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
    doc = split(document_of(history[0]))
    assert reindex(rows_for(doc), doc) == Reindex(tuple(rows_for(doc)), ())


@settings(max_examples=200)
@given(versions)
def test_a_rev_never_goes_back_and_rises_by_one_exactly_when_the_bytes_change(
    history: list[list[tuple[str, str]]],
) -> None:
    stored: dict[str, SectionRow] = {}
    for sections in history:
        doc = split(document_of(sections))
        result = reindex(list(stored.values()), doc)
        now = by_key(result.rows)
        for key, old in stored.items():
            new = now.get(key, old)  # a row left out is left as it was
            assert new.rev >= old.rev
            bytes_changed = (new.present, new.hash) != (old.present, old.hash)
            assert (key in result.changed) is bytes_changed
            assert new.rev == old.rev + (1 if bytes_changed and new.present else 0)
        for key, row in now.items():
            assert (row.hash is None) is (not row.present)
            if row.present:
                assert row.hash == digest(row.heading + row.body)
            if key not in stored:
                assert row.rev == 1
                assert key in result.changed
        assert {row.key for row in result.rows if row.present} == {s.key for s in doc.sections}
        stored.update(now)
