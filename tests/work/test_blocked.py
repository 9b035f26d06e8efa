"""Why an open item is not ready: the failed items it waits on, directly or through open
items that wait too — named with the item of its own ``after`` that leads there and the
failure's reason; a done item, a claimed one or an item the map lacks (done, then trimmed)
blocks nothing."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.work.blocked import Blocker, blocked_map, blockers, sentence
from memkeeper.work.items import Item

NOW = 1_700_000_000.0


def item(id: int, *after: int, state: str = "open", reason: str = "") -> Item:
    base = Item(id, 1, f"item {id}", "open", "a", NOW + id, after=after)
    return replace(base, state=state, reason=reason)  # type: ignore[arg-type]


def by_id(*items: Item) -> dict[int, Item]:
    return {i.id: i for i in items}


def test_an_item_waiting_on_a_failed_one_is_blocked_by_it() -> None:
    items = by_id(item(1, state="failed", reason="tests red"), item(2, 1))
    assert blockers(items[2], items) == (Blocker(1, "tests red"),)
    assert sentence(blockers(items[2], items)) == "blocked: depends on #1, which failed (tests red)"


def test_through_open_items_the_failed_one_is_named_with_the_first_step() -> None:
    items = by_id(item(1, state="failed", reason="boom"), item(2, 1), item(3, 2), item(4, 3, 2))
    assert blockers(items[3], items) == (Blocker(1, "boom", through=2),)
    assert blockers(items[4], items) == (Blocker(1, "boom", through=3),)
    assert Blocker(1, "boom", 3).words() == "depends on #1 (through #3), which failed (boom)"
    assert Blocker(1, "").words() == "depends on #1, which failed"


def test_done_claimed_and_missing_items_block_nothing() -> None:
    items = by_id(item(1, state="done"), item(2, state="claimed"), item(3, 1, 2, 9))
    assert blockers(items[3], items) == ()
    failed = by_id(item(1, state="failed"), item(2, 1, state="claimed"))
    assert blockers(failed[2], failed) == ()  # taken: not waiting on anything
    assert blockers(failed[1], failed) == ()  # failed itself: retried, not unblocked


def test_a_cycle_in_the_map_ends_the_walk() -> None:
    items = by_id(item(1, 2), item(2, 1), item(3, state="failed"), item(4, 1, 3))
    assert blockers(items[4], items) == (Blocker(3, ""),)


@given(st.lists(st.tuples(st.sampled_from(["open", "done", "failed"]), st.sets(st.integers(1, 8))),
                min_size=1, max_size=8))  # fmt: skip
def test_blocked_items_are_the_open_ones_a_failed_one_holds_back_until_it_is_retried(
    spec: list[tuple[str, set[int]]],
) -> None:
    # ``after`` only names earlier ids: no cycles, as add and edit guarantee
    items = [item(n, *sorted(d for d in deps if d < n), state=s) for n, (s, deps) in
             enumerate(spec, 1)]  # fmt: skip
    table = {i.id: i for i in items}
    assert set(blocked_map(items)) == {
        i.id for i in items if i.state == "open" and _reaches(i, table)
    }
    retried = [replace(i, state="open") if i.state == "failed" else i for i in items]
    assert blocked_map(retried) == {}


def _reaches(start: Item, items: dict[int, Item]) -> bool:
    todo, seen = list(start.after), set()
    while todo:
        n = todo.pop()
        if n in seen or n not in items:
            continue
        seen.add(n)
        if items[n].state == "failed":
            return True
        if items[n].state == "open":
            todo.extend(items[n].after)
    return False
