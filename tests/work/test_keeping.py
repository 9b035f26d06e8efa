"""Which ended items ``work add`` drops: those ended more than ``keep_days`` ago and those
beyond the newest ``keep``, never one an item not done names in its ``after``, at most
``MAX_DROP`` at a time (oldest first), and only on every ``TRIM_EVERY``-th add."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.work.items import Item
from memkeeper.work.keeping import DAY_S, MAX_DROP, TRIM_EVERY, due, to_trim

NOW = 1_700_000_000.0


def waiting_on(*ids: int) -> Item:
    return Item(999, 1, "waits", "open", "a", NOW, after=ids)


def test_old_ones_and_those_beyond_the_count_go() -> None:
    ended = [(1, NOW - 40 * DAY_S), (2, NOW - DAY_S), (3, NOW), (4, None)]
    assert to_trim(ended, [], NOW, 30, 1000) == [1]
    assert to_trim(ended, [], NOW, 30, 2) == [1, 2]
    assert to_trim(ended, [], NOW, 0, 1000) == [1, 2]  # ended before now; 3 ended now
    assert to_trim(ended, [], NOW, 30, 0) == [1, 2, 3, 4]


def test_an_item_another_depends_on_is_never_dropped() -> None:
    ended = [(1, NOW - 40 * DAY_S), (2, NOW - 40 * DAY_S)]
    assert to_trim(ended, [waiting_on(1)], NOW, 30, 0) == [2]


def test_a_trim_drops_the_oldest_few_and_is_due_every_so_many_adds() -> None:
    ended = [(n, NOW) for n in range(1, 100)]
    assert to_trim(ended, [], NOW, 30, 0) == list(range(1, MAX_DROP + 1))
    assert [n for n in range(1, 3 * TRIM_EVERY + 1) if due(n)] == [
        TRIM_EVERY, 2 * TRIM_EVERY, 3 * TRIM_EVERY,
    ]  # fmt: skip


@given(
    st.lists(
        st.tuples(st.integers(1, 60), st.floats(NOW - 90 * DAY_S, NOW)), unique_by=lambda t: t[0]
    ),
    st.sets(st.integers(1, 60)),
    st.integers(0, 60),
    st.integers(0, 50),
)
def test_what_stays_is_within_the_bound_unless_protected(
    ended: list[tuple[int, float]], protected: set[int], keep_days: int, keep: int
) -> None:
    drop = to_trim(ended, [waiting_on(*protected)], NOW, keep_days, keep)
    assert not set(drop) & protected
    assert drop == sorted(drop)
    assert len(drop) <= MAX_DROP
    stays = [e for e in ended if e[0] not in drop]
    if len(drop) < MAX_DROP:
        loose = [e for e in stays if e[0] not in protected]
        assert all(at >= NOW - keep_days * DAY_S for _, at in loose)
        assert len(loose) <= keep or len(stays) <= keep
