from __future__ import annotations

import hashlib
import itertools
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.events import (
    GENESIS,
    canonical,
    chain_breaks,
    chain_hash,
    digest,
    iso_utc,
    make_event,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.records import Event

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def chain(count: int) -> list[Event]:
    events: list[Event] = []
    for n in range(count):
        previous = events[-1] if events else None
        events.append(
            make_event(
                previous,
                iso_utc(n),
                f"agent-{n % 2}",
                "section.patched",
                "CLAUDE.md",
                "build",
                {"rev": n + 1},
            )
        )
    return events


def test_digest_is_sha256_prefixed_hex() -> None:
    assert digest(b"abc") == "sha256:" + hashlib.sha256(b"abc").hexdigest()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest(b""))


def test_genesis_is_a_digest_shaped_string_of_zeros() -> None:
    assert GENESIS == "sha256:" + "0" * 64


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (0.5, "1970-01-01T00:00:00.500Z"),
        (1_795_000_000.25, "2026-11-18T11:06:40.250Z"),
        (1.001, "1970-01-01T00:00:01.001Z"),
        (86_399.999, "1970-01-01T23:59:59.999Z"),
        (59.9996, "1970-01-01T00:01:00.000Z"),
    ],
)
def test_iso_utc_renders_utc_with_milliseconds(seconds: float, expected: str) -> None:
    assert iso_utc(seconds) == expected


@given(st.floats(min_value=0, max_value=4_000_000_000, allow_nan=False))
def test_iso_utc_always_has_the_contract_shape(seconds: float) -> None:
    assert ISO.match(iso_utc(seconds))


@given(st.floats(min_value=0, max_value=4_000_000_000), st.floats(min_value=0, max_value=10))
def test_iso_utc_never_goes_backwards(seconds: float, later_by: float) -> None:
    assert iso_utc(seconds) <= iso_utc(seconds + later_by)


def test_first_event_has_id_one_and_the_genesis_prev() -> None:
    first = make_event(None, "t", "human", "emit", None, None, {})
    assert (first.id, first.prev) == (1, GENESIS)
    assert first.hash == chain_hash(1, "t", "human", "emit", None, None, {}, GENESIS)


def test_each_event_links_to_the_hash_of_the_one_before() -> None:
    events = chain(4)
    assert [e.id for e in events] == [1, 2, 3, 4]
    for before, after in itertools.pairwise(events):
        assert after.prev == before.hash
    assert len({e.hash for e in events}) == 4


def test_the_hash_covers_every_field() -> None:
    base = ("2026-01-01T00:00:00.000Z", "a", "emit", "p.md", "k", {"x": 1}, GENESIS)
    original = chain_hash(1, *base)
    for index, changed in enumerate(["ts2", "b", "other", "q.md", "j", {"x": 2}, "sha256:1"]):
        fields = list(base)
        fields[index] = changed
        assert chain_hash(1, *fields) != original  # type: ignore[arg-type]
    assert chain_hash(2, *base) != original


def test_the_hash_does_not_depend_on_data_key_order() -> None:
    one = chain_hash(1, "t", "a", "emit", None, None, {"a": 1, "b": 2}, GENESIS)
    assert one == chain_hash(1, "t", "a", "emit", None, None, {"b": 2, "a": 1}, GENESIS)


def test_an_intact_chain_reports_nothing() -> None:
    assert chain_breaks(chain(5)) == []
    assert chain_breaks([]) == []


def test_an_edited_field_breaks_that_event() -> None:
    events = chain(4)
    events[2] = events[2]._replace(actor="mallory")
    breaks = chain_breaks(events)
    assert [event_id for event_id, _ in breaks] == [3]
    assert "edited" in breaks[0][1]


def test_edited_data_breaks_that_event() -> None:
    events = chain(3)
    events[1] = events[1]._replace(data={"rev": 99})
    assert [event_id for event_id, _ in chain_breaks(events)] == [2]


def test_a_recomputed_edit_still_breaks_the_next_link() -> None:
    events = chain(3)
    forged = events[1]._replace(actor="mallory")
    forged = forged._replace(hash=chain_hash(*forged[:8]))
    events[1] = forged
    breaks = chain_breaks(events)
    assert [event_id for event_id, _ in breaks] == [3]
    assert "prev" in breaks[0][1]


def test_a_deleted_event_is_reported_where_the_gap_is() -> None:
    events = chain(5)
    del events[2]
    breaks = chain_breaks(events)
    assert {event_id for event_id, _ in breaks} == {4}
    assert any("missing" in what for _, what in breaks)
    assert any("prev" in what for _, what in breaks)


def test_a_deleted_first_event_is_reported() -> None:
    assert chain_breaks(chain(3)[1:])[0][0] == 2


def test_reordered_events_are_reported() -> None:
    events = chain(4)
    events[1], events[2] = events[2], events[1]
    breaks = chain_breaks(events)
    assert {event_id for event_id, _ in breaks} >= {2, 3}
    assert any("reordered" in what for _, what in breaks)


@given(st.integers(min_value=1, max_value=8), st.data())
def test_changing_any_one_event_is_always_detected(count: int, data: st.DataObject) -> None:
    events = chain(count)
    index = data.draw(st.integers(min_value=0, max_value=count - 1))
    events[index] = events[index]._replace(ts=events[index].ts + "!")
    assert chain_breaks(events)


@pytest.mark.parametrize("size", [256 * 1024 - 1, 256 * 1024, 256 * 1024 + 1, 1024 * 1024])
def test_digest_is_the_same_sha256_on_either_side_of_the_large_file_cutover(size: int) -> None:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    assert digest(data) == "sha256:" + hashlib.sha256(data).hexdigest()


def test_canonical_json_sorts_keys_drops_spaces_and_keeps_unicode() -> None:
    data = {"b": 1, "a": {"d": [1, 2], "c": "é"}}
    assert canonical(data) == '{"a":{"c":"é","d":[1,2]},"b":1}'.encode()


@given(st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4), max_size=5))
def test_canonical_json_is_the_same_for_any_key_order(data: dict[str, int | str]) -> None:
    reordered = dict(reversed(list(data.items())))
    assert canonical(reordered) == canonical(data)
    assert json.loads(canonical(data)) == data


def test_make_event_keeps_what_it_was_given() -> None:
    first = make_event(None, "t1", "agent-a", "section.patched", "CLAUDE.md", "build", {"rev": 2})
    second = make_event(first, "t2", "agent-b", "emit", None, None, {})
    assert (first.ts, first.actor, first.type, first.path, first.section, first.data) == (
        "t1",
        "agent-a",
        "section.patched",
        "CLAUDE.md",
        "build",
        {"rev": 2},
    )
    assert (second.id, second.prev, second.path) == (2, first.hash, None)
    assert chain_breaks([first, second]) == []


@given(st.integers(min_value=0, max_value=4_000_000_000_000))
def test_parse_utc_reads_back_what_iso_utc_writes(millis: int) -> None:
    from memkeeper.events import iso_utc, parse_utc

    assert parse_utc(iso_utc(millis / 1000)) == pytest.approx(millis / 1000, abs=1e-6)


def test_parse_utc_refuses_what_is_not_a_stamp() -> None:
    from memkeeper.events import parse_utc

    with pytest.raises(ValueError, match="not a memkeeper timestamp"):
        parse_utc("2026-12-01T10:00:00")


def test_digest_without_openssl_loaded_is_the_same_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A small file's hash uses CPython's own sha256 until something has loaded hashlib."""
    import sys

    expected = "sha256:" + hashlib.sha256(b"abc").hexdigest()
    monkeypatch.delitem(sys.modules, "hashlib")
    assert digest(b"abc") == expected
    assert "hashlib" not in sys.modules  # a small input loads nothing


@given(st.data())
def test_a_walk_from_a_checkpoint_finds_exactly_the_edits_after_it(data: st.DataObject) -> None:
    """The property a routine verify rests on: walking on from event ``c`` (its id and hash)
    finds an edit of event ``t`` whose stored hash was left as it was iff ``t > c``; a walk
    from the start finds it wherever it is."""
    events = chain(data.draw(st.integers(min_value=2, max_value=12)))
    c = data.draw(st.integers(min_value=0, max_value=len(events) - 1))
    t = data.draw(st.integers(min_value=1, max_value=len(events)))
    edited = [e._replace(actor="mallory") if e.id == t else e for e in events]
    after = (0, GENESIS) if c == 0 else (c, events[c - 1].hash)
    routine = chain_breaks(edited[c:], after)
    assert bool(routine) == (t > c)
    assert [event_id for event_id, _ in chain_breaks(edited)] == [t]
    assert chain_breaks(events[c:], after) == []
