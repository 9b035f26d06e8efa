"""Immutable records: fields in order, equality, replacement, and their JSON forms."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.records import (
    Event,
    FileState,
    PatchResult,
    Record,
    SectionInfo,
    SectionRow,
    SectionText,
    Verdict,
    Violation,
)

HASH = "sha256:" + "ab" * 32


def section_row(**changes: object) -> SectionRow:
    row = SectionRow("a/b", 2, 3, HASH, True, "B", 2, "b", b"## B\n", b"text\n", 2)
    return row._replace(**changes)


EXAMPLES: list[Record] = [
    SectionInfo("a/b", "B", 2, 3, HASH, 4, 9),
    SectionText("CLAUDE.md", "a/b", "## B\n", "text\n", 3, HASH, 7, HASH),
    PatchResult("CLAUDE.md", "a/b", 4, HASH, 8, HASH, 12, ("warned",)),
    Event(1, "2026-01-01T00:00:00.000Z", "human", "emit", None, None, {"x": [1]}, HASH, HASH),
    Verdict("section-owned", True, ("human",)),
    Violation("CLAUDE.md", 3, "structure", "a heading moved", "put it back"),
    FileState(7, HASH),
    section_row(),
]


@pytest.mark.parametrize("record", EXAMPLES, ids=lambda r: type(r).__name__)
def test_a_record_iterates_indexes_and_counts_its_fields_in_slot_order(record: Record) -> None:
    values = tuple(getattr(record, name) for name in record.__slots__)
    assert tuple(record) == values
    assert len(record) == len(values)
    assert record[0] == values[0]
    assert record[-1] == values[-1]
    assert record[1:3] == values[1:3]
    assert list(record._asdict()) == list(record.__slots__)


@pytest.mark.parametrize("record", EXAMPLES, ids=lambda r: type(r).__name__)
def test_a_record_rebuilds_from_its_values_and_equals_its_copy(record: Record) -> None:
    rebuilt = type(record)(*record)
    assert rebuilt == record
    assert rebuilt is not record
    assert record._replace() == record


@pytest.mark.parametrize("record", EXAMPLES, ids=lambda r: type(r).__name__)
def test_a_record_refuses_assignment_and_points_at_replace(record: Record) -> None:
    name = record.__slots__[0]
    before = getattr(record, name)
    with pytest.raises(AttributeError, match=rf"^{type(record).__name__} is immutable; use _repl"):
        setattr(record, name, "changed")
    assert getattr(record, name) == before


@pytest.mark.parametrize("record", EXAMPLES, ids=lambda r: type(r).__name__)
def test_a_record_is_unhashable_because_it_may_hold_a_dict(record: Record) -> None:
    with pytest.raises(TypeError):
        hash(record)


def test_records_of_different_kinds_are_never_equal() -> None:
    class Other(Record):
        __slots__ = ("file_rev", "file_hash")

        def __init__(self, file_rev: int, file_hash: str) -> None:
            self._fill(file_rev, file_hash)

    assert FileState(7, HASH) != Other(7, HASH)
    assert FileState(7, HASH) != (7, HASH)
    assert FileState(7, HASH) != FileState(8, HASH)


def test_the_repr_names_every_field() -> None:
    assert repr(FileState(7, HASH)) == f"FileState(file_rev=7, file_hash='{HASH}')"
    assert repr(Verdict(None, False, None)) == "Verdict(file_class=None, strict=False, owners=None)"


def test_replace_changes_only_what_it_is_given() -> None:
    row = section_row()
    gone = row._replace(present=False, hash=None)
    assert (gone.present, gone.hash) == (False, None)
    assert gone._replace(present=True, hash=HASH) == row
    assert (row.present, row.hash) == (True, HASH), "the original is untouched"
    assert type(gone) is SectionRow


def test_replace_refuses_a_field_the_record_does_not_have() -> None:
    with pytest.raises((TypeError, ValueError)):
        section_row()._replace(presnet=False)


def test_a_field_cannot_be_deleted_either() -> None:
    state = FileState(7, HASH)
    with pytest.raises(AttributeError):
        del state.file_rev
    assert state.file_rev == 7


# --- JSON forms --------------------------------------------------------------------------------


def test_a_plain_record_is_its_fields_as_json() -> None:
    info = SectionInfo("a/b", "B", 2, 3, HASH, 4, 9)
    assert info.to_json() == {
        "key": "a/b",
        "title": "B",
        "level": 2,
        "rev": 3,
        "hash": HASH,
        "start_line": 4,
        "end_line": 9,
    }


def test_a_patch_result_lists_its_warnings_and_has_none_by_default() -> None:
    result = PatchResult("CLAUDE.md", "a/b", 4, HASH, 8, HASH, 12)
    assert result.warnings == ()
    assert result.to_json()["warnings"] == []
    warned = result._replace(warnings=("one", "two"))
    assert warned.to_json()["warnings"] == ["one", "two"]
    assert json.loads(json.dumps(warned.to_json()))["event_id"] == 12


def test_a_verdict_in_json_calls_its_class_class() -> None:
    assert Verdict("append-only", False, None).to_json() == {
        "class": "append-only",
        "strict": False,
        "owners": None,
    }
    assert Verdict("section-owned", True, ("a", "b")).to_json()["owners"] == ["a", "b"]


def test_a_verdict_from_sparse_json_is_unmanaged_and_open() -> None:
    assert Verdict.from_json({}) == Verdict(None, False, None)
    assert Verdict.from_json({"class": "private", "strict": 1}) == Verdict("private", True, None)


def test_an_empty_owners_list_survives_the_round_trip_as_nobody() -> None:
    verdict = Verdict("section-owned", False, ())
    assert Verdict.from_json(verdict.to_json()) == verdict
    assert Verdict.from_json(verdict.to_json()).owners == ()


# --- round trips -------------------------------------------------------------------------------

texts = st.text(max_size=8)
owners = st.one_of(st.none(), st.lists(st.text(min_size=1, max_size=5), max_size=3).map(tuple))
verdicts = st.builds(
    Verdict,
    st.one_of(st.none(), st.sampled_from(["section-owned", "append-only", "generated", "private"])),
    st.booleans(),
    owners,
)
rows = st.builds(
    SectionRow,
    texts,
    st.integers(min_value=0),
    st.integers(min_value=1),
    st.one_of(st.none(), st.just(HASH)),
    st.booleans(),
    texts,
    st.integers(min_value=0, max_value=6),
    texts,
    st.binary(max_size=8),
    st.binary(max_size=8),
    st.integers(min_value=0),
)


@given(verdicts)
def test_a_verdict_survives_json_text_and_back(verdict: Verdict) -> None:
    assert Verdict.from_json(json.loads(json.dumps(verdict.to_json()))) == verdict


@given(rows)
def test_a_row_rebuilds_from_its_dict_and_its_replacements(row: SectionRow) -> None:
    assert SectionRow(**row._asdict()) == row
    assert SectionRow(*row) == row
    assert row._replace(**row._asdict()) == row
    assert row.to_json() == row._asdict()


@given(rows, st.integers(min_value=1))
def test_replacing_one_field_changes_that_field_alone(row: SectionRow, rev: int) -> None:
    bumped = row._replace(rev=rev)
    assert bumped.rev == rev
    assert {k: v for k, v in bumped._asdict().items() if k != "rev"} == {
        k: v for k, v in row._asdict().items() if k != "rev"
    }
    assert (bumped == row) is (rev == row.rev)


@given(
    st.builds(
        PatchResult,
        texts,
        texts,
        st.integers(min_value=1),
        st.just(HASH),
        st.integers(min_value=1),
        st.just(HASH),
        st.integers(min_value=1),
        st.lists(texts, max_size=3).map(tuple),
    )
)
def test_a_patch_result_survives_json_text_and_back(result: PatchResult) -> None:
    loaded = json.loads(json.dumps(result.to_json()))
    assert PatchResult(**{**loaded, "warnings": tuple(loaded["warnings"])}) == result
