"""A work item's record: every field survives the stores' JSON, and its JSON for people
gives times as ISO text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.work.items import STATES, Item, decode, encode

texts = st.text(max_size=20)
items = st.builds(
    Item,
    id=st.integers(1, 10**6),
    rev=st.integers(1, 100),
    title=texts,
    state=st.sampled_from(STATES),
    created_by=texts,
    created_at=st.floats(0, 2e9),
    paths=st.lists(texts, max_size=3).map(tuple),
    priority=st.integers(-(2**63) + 1, 2**63 - 1),
    after=st.lists(st.integers(1, 100), max_size=3).map(tuple),
    body=texts,
    claim=st.none() | texts,
    agent=st.none() | texts,
    claimed_at=st.none() | st.floats(0, 2e9),
    ended_at=st.none() | st.floats(0, 2e9),
    reason=texts,
    returns=st.integers(0, 9),
)


@given(items)
def test_a_record_round_trips_through_the_stores_json(item: Item) -> None:
    assert decode(encode(item)) == item
    assert decode(encode(item).encode()) == item


def test_its_json_for_people_gives_times_as_iso_text() -> None:
    item = Item(3, 2, "Fix it", "claimed", "a", 1_700_000_000.0, ("src/",), claimed_at=1.5e9)
    shown = item.to_json()
    assert shown["created_at"] == "2023-11-14T22:13:20.000Z"
    assert shown["claimed_at"].startswith("2017-07-14T02:40:00")
    assert (shown["ended_at"], shown["paths"], shown["after"]) == (None, ["src/"], [])
