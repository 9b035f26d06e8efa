"""The bound on kept meetings: a resolved meeting goes once it ended ``keep_days`` ago or
falls beyond the newest ``keep`` resolved ones; never one not resolved (they are not given)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.meetings.keeping import DAY_S, to_trim

NOW = 1_700_000_000.0


def test_old_ones_and_those_beyond_the_newest_n_go() -> None:
    kept = [(1, NOW - 40 * DAY_S), (2, NOW - 2 * DAY_S), (4, NOW - DAY_S), (7, None)]
    assert to_trim(kept, NOW, 30, 10) == [1]
    assert to_trim(kept, NOW, 30, 2) == [1, 2]
    assert to_trim(kept, NOW, 1, 10) == [1, 2]  # exactly a day old: kept
    assert to_trim(kept, NOW, 0, 0) == [1, 2, 4, 7]
    assert to_trim([], NOW, 30, 10) == []


@given(
    ages=st.lists(st.one_of(st.none(), st.floats(0, 100 * DAY_S)), max_size=40),
    keep_days=st.integers(0, 60),
    keep=st.integers(0, 50),
)
def test_what_stays_is_young_and_among_the_newest(
    ages: list[float | None], keep_days: int, keep: int
) -> None:
    kept = [(n + 1, None if a is None else NOW - a) for n, a in enumerate(ages)]
    drop = set(to_trim(kept, NOW, keep_days, keep))
    stays = [(mid, at) for mid, at in kept if mid not in drop]
    assert drop <= {mid for mid, _ in kept}
    assert len(stays) <= keep
    assert all(at is None or at >= NOW - keep_days * DAY_S for _, at in stays)
    newest = kept[max(0, len(kept) - keep) :]
    young = [mid for mid, at in newest if at is None or at >= NOW - keep_days * DAY_S]
    assert set(young).isdisjoint(drop)  # nothing goes that the bound keeps
